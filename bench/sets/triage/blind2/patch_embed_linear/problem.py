"""Vision-transformer patch embedding (14x14 patches, 3 channels) as a linear layer over the
flattened patches: [num_patches, 588] @ W^T + b, fp16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, patch_features, embed_dim):
        super().__init__()
        self.proj = nn.Linear(patch_features, embed_dim, dtype=torch.float16)

    def forward(self, patches):
        return self.proj(patches)


num_patches = 65536
patch_features = 588
embed_dim = 1024


def get_inputs():
    return [torch.randn(num_patches, patch_features, dtype=torch.float16)]


def get_init_inputs():
    return [patch_features, embed_dim]


def get_cases():
    return [
        {"num_patches": 65536, "embed_dim": 1024},
        {"num_patches": 262144, "embed_dim": 1280},
        {"num_patches": 100000, "embed_dim": 1536},
    ]


def get_test_cases():
    return [{"num_patches": 70, "patch_features": 75, "embed_dim": 96}, {"num_patches": 130, "patch_features": 588, "embed_dim": 64}]


def flops(case):
    return 2 * case["num_patches"] * patch_features * case["embed_dim"]
