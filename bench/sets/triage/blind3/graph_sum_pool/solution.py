import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scatter_rows_add(feat_ptr, gid_ptr, out_ptr, n_nodes, DIM: tl.constexpr, NODES_PER_PROG: tl.constexpr):
    nodes = tl.program_id(0) * NODES_PER_PROG + tl.arange(0, NODES_PER_PROG)
    live = nodes < n_nodes
    d = tl.arange(0, DIM)
    g = tl.load(gid_ptr + nodes, mask=live, other=0).to(tl.int32)
    x = tl.load(feat_ptr + nodes[:, None] * DIM + d[None, :], mask=live[:, None], other=0.0)
    tl.atomic_add(out_ptr + g[:, None] * DIM + d[None, :], x, mask=live[:, None])


class ModelNew(nn.Module):
    def __init__(self, graphs):
        super().__init__()
        self.graphs = graphs

    def forward(self, node_feats, graph_ids):
        n, dim = node_feats.shape
        out = torch.zeros((self.graphs, dim), device=node_feats.device, dtype=node_feats.dtype)
        block = max(1, 4096 // dim)
        scatter_rows_add[(triton.cdiv(n, block),)](node_feats, graph_ids, out, n, DIM=dim, NODES_PER_PROG=block)
        return out
