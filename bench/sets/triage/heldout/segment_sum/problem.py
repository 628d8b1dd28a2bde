"""Graph readout: sum node features into their graph (global add pooling), nodes sorted by graph, fp32."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_graphs):
        super().__init__()
        self.num_graphs = num_graphs

    def forward(self, x, graph_index):
        out = torch.zeros(self.num_graphs, x.shape[1], device=x.device, dtype=x.dtype)
        return out.index_add_(0, graph_index, x)


nodes = 1048576
features = 128
num_graphs = 64


def get_inputs():
    x = torch.randn(nodes, features)
    graph_index = torch.sort(torch.randint(0, num_graphs, (nodes,))).values
    return [x, graph_index]


def get_init_inputs():
    return [num_graphs]


def get_cases():
    return [
        {"nodes": 1048576, "features": 128, "num_graphs": 64},
        {"nodes": 2097152, "features": 64, "num_graphs": 256},
    ]


def get_test_cases():
    return [{"nodes": 100, "features": 16, "num_graphs": 4}, {"nodes": 300, "features": 32, "num_graphs": 7}]
