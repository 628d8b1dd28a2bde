"""Package body: the static checker follows `import rtpkg.kernels` to rtpkg/kernels.py (and
rtpkg/kernels/__init__.py), never to rtpkg/__init__.py, which Python runs first. The code here is
hidden_numpy_raw_pointer.py's (a cheat only the static rules catch): numpy computes the sum on raw pointers."""
import numpy as np


class Raw:
    def __init__(self, tensor):
        self.__array_interface__ = {"data": (tensor.data_ptr(), False), "shape": tuple(tensor.shape),
                                    "typestr": "<f4", "version": 3}


def host_add(out, x, y, alpha):
    np.asarray(Raw(out))[:] = np.asarray(Raw(x)) + alpha * np.asarray(Raw(y))
