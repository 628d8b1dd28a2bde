import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scatter_add_rows_kernel(x_ptr, index_ptr, out_ptr, n_nodes, n_feat, stride_x, stride_out,
                            BLOCK_NODES: tl.constexpr, BLOCK_FEAT: tl.constexpr):
    pid = tl.program_id(0)
    nodes = pid * BLOCK_NODES + tl.arange(0, BLOCK_NODES)
    feats = tl.arange(0, BLOCK_FEAT)
    node_mask = nodes < n_nodes
    mask = node_mask[:, None] & (feats[None, :] < n_feat)
    graph = tl.load(index_ptr + nodes, mask=node_mask, other=0)
    vals = tl.load(x_ptr + nodes[:, None] * stride_x + feats[None, :], mask=mask, other=0.0)
    tl.atomic_add(out_ptr + graph[:, None] * stride_out + feats[None, :], vals, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_graphs):
        super().__init__()
        self.num_graphs = num_graphs

    def forward(self, x, graph_index):
        x = x.contiguous()
        n_nodes, n_feat = x.shape
        out = torch.zeros(self.num_graphs, n_feat, device=x.device, dtype=x.dtype)
        BLOCK_NODES = 32
        scatter_add_rows_kernel[(triton.cdiv(n_nodes, BLOCK_NODES),)](
            x, graph_index, out, n_nodes, n_feat, x.stride(0), out.stride(0),
            BLOCK_NODES=BLOCK_NODES, BLOCK_FEAT=triton.next_power_of_2(n_feat))
        return out
