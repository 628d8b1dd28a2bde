"""Graph-level readout of a batched GNN: sum the node features of each graph (nodes are grouped by
graph, `graph_ids` sorted); fp32."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, graphs):
        super().__init__()
        self.graphs = graphs

    def forward(self, node_feats, graph_ids):
        out = node_feats.new_zeros(self.graphs, node_feats.shape[1])
        return out.index_add_(0, graph_ids, node_feats)


nodes = 1_000_000
dim = 128
graphs = 32


def get_inputs():
    graph_ids = torch.randint(0, graphs, (nodes,)).sort().values
    return [torch.randn(nodes, dim), graph_ids]


def get_init_inputs():
    return [graphs]


def get_cases():
    return [
        {"nodes": 1_000_000, "dim": 128, "graphs": 32},
        {"nodes": 2_000_000, "dim": 64, "graphs": 128},
        {"nodes": 500_000, "dim": 256, "graphs": 16},
    ]


def get_test_cases():
    return [{"nodes": 300, "dim": 64, "graphs": 4}]
