"""One Adam step (no weight decay) over the parameter list of a small transformer (embedding,
per-layer attention/MLP matrices, biases and LayerNorm vectors), fp32. Returns the updated
parameters, first and second moments, each as a list."""
import torch
import torch.nn as nn


def _param_shapes(layers, hidden):
    shapes = [(30522, hidden), (512, hidden), (hidden,), (hidden,)]
    for _ in range(layers):
        shapes += [(3 * hidden, hidden), (3 * hidden,), (hidden, hidden), (hidden,), (hidden,), (hidden,),
                   (4 * hidden, hidden), (4 * hidden,), (hidden, 4 * hidden), (hidden,), (hidden,), (hidden,)]
    return shapes


class Model(nn.Module):
    def __init__(self, lr, beta1, beta2, eps, step):
        super().__init__()
        self.lr, self.beta1, self.beta2, self.eps, self.step = lr, beta1, beta2, eps, step

    def forward(self, params, grads, exp_avgs, exp_avg_sqs):
        bc1 = 1 - self.beta1 ** self.step
        bc2 = 1 - self.beta2 ** self.step
        new_p, new_m, new_v = [], [], []
        for p, g, m, v in zip(params, grads, exp_avgs, exp_avg_sqs):
            m = m * self.beta1 + g * (1 - self.beta1)
            v = v * self.beta2 + g * g * (1 - self.beta2)
            p = p - self.lr * (m / bc1) / ((v / bc2).sqrt() + self.eps)
            new_p.append(p)
            new_m.append(m)
            new_v.append(v)
        return new_p, new_m, new_v


layers = 12
hidden = 768


def get_inputs():
    shapes = _param_shapes(layers, hidden)
    return [[torch.randn(s) for s in shapes], [torch.randn(s) * 1e-2 for s in shapes],
            [torch.randn(s) * 1e-3 for s in shapes], [torch.rand(s) * 1e-5 for s in shapes]]


def get_init_inputs():
    return [1e-4, 0.9, 0.999, 1e-8, 100]


def get_cases():
    return [{"layers": 12, "hidden": 768}, {"layers": 24, "hidden": 1024}, {"layers": 6, "hidden": 512}]


def get_test_cases():
    return [{"layers": 1, "hidden": 8}]
