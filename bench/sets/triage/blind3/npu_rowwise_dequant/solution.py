import torch
import torch_npu
import torch.nn as nn
import triton
import triton.language as tl

VECTOR_CORES = 40


@triton.jit
def dequant_rows_kernel(q_ptr, s_ptr, out_ptr, n_rows, N: tl.constexpr, SUB: tl.constexpr):
    c = tl.arange(0, SUB)
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        scale = tl.load(s_ptr + row)
        for start in range(0, N, SUB):
            q = tl.load(q_ptr + row * N + start + c).to(tl.float32)
            tl.store(out_ptr + row * N + start + c, (q * scale).to(tl.float16))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, scale):
        rows, cols = q.shape
        out = torch.empty((rows, cols), device=q.device, dtype=torch.float16)
        dequant_rows_kernel[(VECTOR_CORES,)](q, scale, out, rows, N=cols, SUB=1024)
        return out
