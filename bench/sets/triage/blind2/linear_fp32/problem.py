"""Linear layer in fp32 (x @ W^T + b), as in an fp32 classification or regression head. TF32
tensor-core precision is acceptable for this operator (torch's own matmul may use it)."""
import torch
import torch.nn as nn

ALLOW_TF32 = True


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return self.fc(x)


batch = 8192
in_features = 4096
out_features = 4096


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def get_cases():
    return [
        {"batch": 8192, "in_features": 4096, "out_features": 4096},
        {"batch": 4096, "in_features": 8192, "out_features": 2048},
        {"batch": 3000, "in_features": 3072, "out_features": 6000},
    ]


def get_test_cases():
    return [{"batch": 40, "in_features": 96, "out_features": 80}, {"batch": 64, "in_features": 64, "out_features": 64}]


def flops(case):
    return 2 * case["batch"] * case["in_features"] * case["out_features"]
