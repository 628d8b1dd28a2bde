"""Class probabilities of an image classifier with 10450 classes (ImageNet-21k-P head): softmax of
fp32 logits per image, on an Ascend NPU."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, logits):
        return torch.softmax(logits, dim=-1)


batch = 1024
classes = 10450


def get_inputs():
    return [torch.randn(batch, classes, dtype=torch.float32) * 3]


def get_init_inputs():
    return []


def get_cases():
    return [{"batch": 1024, "classes": 10450}, {"batch": 4096, "classes": 10450}, {"batch": 2048, "classes": 11821}]


def get_test_cases():
    return [{"batch": 3, "classes": 1000}, {"batch": 2, "classes": 3000}]
