"""k-means assignment step: index of the nearest centroid (squared Euclidean distance) for every
point; fp32 points [N, D] and centroids [C, D], int64 output."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, points, centroids):
        d = (points[:, None, :] - centroids[None, :, :]).pow(2).sum(-1)
        return d.argmin(dim=1)


points = 262144
clusters = 1024
dim = 128


def get_inputs():
    return [torch.randn(points, dim), torch.randn(clusters, dim)]


def get_init_inputs():
    return []


def get_cases():
    return [
        {"points": 262144, "clusters": 1024, "dim": 128},
        {"points": 1048576, "clusters": 256, "dim": 64},
        {"points": 100000, "clusters": 4096, "dim": 96},
    ]


def get_test_cases():
    return [{"points": 40, "clusters": 20, "dim": 32}, {"points": 33, "clusters": 17, "dim": 64}]


def flops(case):
    return 3 * case["points"] * case["clusters"] * case["dim"]
