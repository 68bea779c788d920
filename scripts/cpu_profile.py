"""Print what NumPy, torch and numba report about the instructions they use, and fail
when one of them did not take the narrower setting that ``narrow_cpu.sh`` gave it.

A setting that silently did nothing would make the second CPU profile a second run
of the first, so each library is asked, not trusted:

- NumPy: which of its dispatch targets above the baseline are on (none may be);
- torch: the capability ATen's kernels were chosen for (``DEFAULT``: no SIMD);
- numba: the CPU it compiles for, and a vectorisable loop compiled with it, whose
  machine code may use no 256- or 512-bit registers.
"""

from __future__ import annotations

import os
import platform
import sys


def numpy_report() -> tuple[str, bool]:
    import numpy as np

    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:  # NumPy 1.x
        from numpy.core import _multiarray_umath as umath
    above = [f for f in umath.__cpu_dispatch__ if umath.__cpu_features__.get(f)]
    text = f"NumPy {np.__version__}: baseline {umath.__cpu_baseline__}, dispatch targets on {above}"
    return text, not above


def torch_report() -> tuple[str, bool]:
    import torch

    capability = torch.backends.cpu.get_cpu_capability()
    wanted = os.environ.get("ATEN_CPU_CAPABILITY", "").upper()
    return f"torch {torch.__version__}: ATen CPU capability {capability}", capability == wanted


def numba_report() -> tuple[str, bool]:
    import numba
    import numpy as np

    @numba.njit
    def scale(a, out):
        for i in range(a.size):
            out[i] = a[i] * np.float32(3.0) + np.float32(1.0)

    a = np.ones(64, np.float32)
    scale(a, np.empty_like(a))
    asm = next(iter(scale.inspect_asm().values()))
    wide = [reg for reg in ("ymm", "zmm") if reg in asm]
    text = f"numba {numba.__version__}: CPU {numba.config.CPU_NAME!r}, wide registers used {wide}"
    x86 = platform.machine().lower() in ("x86_64", "amd64")
    return text, numba.config.CPU_NAME == os.environ.get("NUMBA_CPU_NAME") and not (x86 and wide)


def main() -> int:
    failed = []
    for name, report in (("NumPy", numpy_report), ("torch", torch_report),
                         ("numba", numba_report)):
        text, took = report()
        print(f"cpu profile: {text}" + ("" if took else "  <- the setting did not take"))
        if not took:
            failed.append(name)
    if failed:
        print(f"cpu profile: {', '.join(failed)} ignored the narrower setting", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
