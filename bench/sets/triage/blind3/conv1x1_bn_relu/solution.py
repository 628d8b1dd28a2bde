import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_P": 128, "BLOCK_CO": 128, "BLOCK_CI": 64, "GROUP_P": 8}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_P": 128, "BLOCK_CO": 64, "BLOCK_CI": 32, "GROUP_P": 8}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_P": 64, "BLOCK_CO": 128, "BLOCK_CI": 64, "GROUP_P": 8}, num_warps=4, num_stages=3),
    ],
    key=["P", "CO", "CI"],
)
@triton.jit
def pointwise_conv_kernel(x_ptr, w_ptr, y_ptr, P, CO, CI,
                          BLOCK_P: tl.constexpr, BLOCK_CO: tl.constexpr, BLOCK_CI: tl.constexpr,
                          GROUP_P: tl.constexpr):
    pid = tl.program_id(0)
    tiles_p = tl.cdiv(P, BLOCK_P)
    tiles_co = tl.cdiv(CO, BLOCK_CO)
    per_group = GROUP_P * tiles_co
    first = (pid // per_group) * GROUP_P
    rows = min(tiles_p - first, GROUP_P)
    tp = first + (pid % per_group) % rows
    tc = (pid % per_group) // rows
    op = tp * BLOCK_P + tl.arange(0, BLOCK_P)
    oc = tc * BLOCK_CO + tl.arange(0, BLOCK_CO)
    ci = tl.arange(0, BLOCK_CI)
    acc = tl.zeros((BLOCK_P, BLOCK_CO), dtype=tl.float32)
    for c0 in range(0, CI, BLOCK_CI):
        x = tl.load(x_ptr + op[:, None] * CI + (c0 + ci)[None, :],
                    mask=(op[:, None] < P) & ((c0 + ci)[None, :] < CI), other=0.0)
        w = tl.load(w_ptr + oc[None, :] * CI + (c0 + ci)[:, None],
                    mask=(oc[None, :] < CO) & ((c0 + ci)[:, None] < CI), other=0.0)
        acc = tl.dot(x, w, acc)
    tl.store(y_ptr + op[:, None] * CO + oc[None, :], acc.to(tl.float16), mask=(op[:, None] < P) & (oc[None, :] < CO))


@triton.jit
def bn_relu_kernel(y_ptr, scale_ptr, shift_ptr, out_ptr, P, CO: tl.constexpr, ROWS: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    c = tl.arange(0, CO)
    m = r[:, None] < P
    y = tl.load(y_ptr + r[:, None] * CO + c[None, :], mask=m, other=0.0).to(tl.float32)
    s = tl.load(scale_ptr + c)
    t = tl.load(shift_ptr + c)
    out = tl.maximum(y * s[None, :] + t[None, :], 0.0)
    tl.store(out_ptr + r[:, None] * CO + c[None, :], out.to(tl.float16), mask=m)


class ModelNew(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 1, bias=False, dtype=torch.float16)
        self.bn = nn.BatchNorm2d(cout, dtype=torch.float16)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)
        self.eval()

    def forward(self, x):
        N, H, W, CI = x.shape
        CO = self.conv.weight.shape[0]
        P = N * H * W
        w = self.conv.weight.reshape(CO, CI)
        bn = self.bn
        scale = (bn.weight.float() / torch.sqrt(bn.running_var.float() + bn.eps))
        shift = bn.bias.float() - bn.running_mean.float() * scale
        y = torch.empty((N, H, W, CO), device=x.device, dtype=torch.float16)
        grid = lambda META: (triton.cdiv(P, META["BLOCK_P"]) * triton.cdiv(CO, META["BLOCK_CO"]),)
        pointwise_conv_kernel[grid](x, w, y, P, CO, CI)
        out = torch.empty_like(y)
        rows = max(1, 4096 // CO)
        bn_relu_kernel[(triton.cdiv(P, rows),)](y, scale, shift, out, P, CO=CO, ROWS=rows, num_warps=8)
        return out
