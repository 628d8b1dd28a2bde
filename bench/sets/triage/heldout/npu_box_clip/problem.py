"""Clip (x1, y1, x2, y2) detection boxes to the image, fp32 boxes of shape (num_boxes, 4), on an Ascend NPU."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, image_width, image_height):
        super().__init__()
        self.register_buffer("upper", torch.tensor([image_width, image_height, image_width, image_height],
                                                   dtype=torch.float32))

    def forward(self, boxes):
        return torch.minimum(boxes.clamp(min=0.0), self.upper)


num_boxes = 8388608
image_width = 1333.0
image_height = 800.0


def get_inputs():
    return [torch.rand(num_boxes, 4) * 1600.0 - 100.0]


def get_init_inputs():
    return [image_width, image_height]


def get_cases():
    return [{"num_boxes": 8388608}, {"num_boxes": 20000000}]


def get_test_cases():
    return [{"num_boxes": 1000}, {"num_boxes": 3001}]
