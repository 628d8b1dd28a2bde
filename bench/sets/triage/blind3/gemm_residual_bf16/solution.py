import torch
import torch.nn as nn
import triton
import triton.language as tl


def _configs():
    return [
        triton.Config({"BM": 128, "BN": 256, "BK": 64, "GROUP": 8}, num_warps=8, num_stages=3),
        triton.Config({"BM": 128, "BN": 128, "BK": 64, "GROUP": 8}, num_warps=8, num_stages=4),
        triton.Config({"BM": 128, "BN": 128, "BK": 64, "GROUP": 8}, num_warps=4, num_stages=4),
        triton.Config({"BM": 64, "BN": 128, "BK": 64, "GROUP": 8}, num_warps=4, num_stages=5),
    ]


@triton.autotune(configs=_configs(), key=["M", "N", "K"])
@triton.jit
def matmul_add_kernel(x_ptr, w_ptr, r_ptr, y_ptr, M, N, K,
                      sxm, sxk, swn, swk, srm, srn, sym, syn,
                      BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
    pid = tl.program_id(axis=0)
    grid_m = tl.cdiv(M, BM)
    grid_n = tl.cdiv(N, BN)
    width = GROUP * grid_n
    group = pid // width
    first_m = group * GROUP
    rows_in_group = min(grid_m - first_m, GROUP)
    pm = first_m + (pid % rows_in_group)
    pn = (pid % width) // rows_in_group

    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    rm_safe = tl.max_contiguous(tl.multiple_of(rm % M, BM), BM)
    rn_safe = tl.max_contiguous(tl.multiple_of(rn % N, BN), BN)
    xp = x_ptr + rm_safe[:, None] * sxm + rk[None, :] * sxk
    wp = w_ptr + rk[:, None] * swk + rn_safe[None, :] * swn

    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(xp, mask=rk[None, :] < K - k0, other=0.0)
        b = tl.load(wp, mask=rk[:, None] < K - k0, other=0.0)
        acc += tl.dot(a, b)
        xp += BK * sxk
        wp += BK * swk

    mask = (rm[:, None] < M) & (rn[None, :] < N)
    res = tl.load(r_ptr + rm[:, None] * srm + rn[None, :] * srn, mask=mask, other=0.0)
    acc += res.to(tl.float32)
    tl.store(y_ptr + rm[:, None] * sym + rn[None, :] * syn, acc.to(tl.bfloat16), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden, out_features):
        super().__init__()
        self.proj = nn.Linear(hidden, out_features, bias=False, dtype=torch.bfloat16)

    def forward(self, x, residual):
        M, K = x.shape
        w = self.proj.weight
        N = w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.bfloat16)
        matmul_add_kernel[lambda META: (triton.cdiv(M, META["BM"]) * triton.cdiv(N, META["BN"]),)](
            x, w, residual, y, M, N, K,
            x.stride(0), x.stride(1), w.stride(0), w.stride(1),
            residual.stride(0), residual.stride(1), y.stride(0), y.stride(1))
        return y
