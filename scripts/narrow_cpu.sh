#!/usr/bin/env bash
# The second CPU profile: the kernel and quantization tests (ch00, ch10, their lessons
# included) once more, with NumPy, torch and numba each told to use no SIMD beyond
# its baseline. Learners run every kind of CPU (AVX2, AVX-512, ARM), and NumPy's and
# torch's vector routines differ between them in the last bit and at special
# values: a test whose oracle leans on those bits passes on the host and fails
# here. CI runs it after the test command (.ci/run); extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    echo "narrow_cpu.sh: no .venv yet; run bash scripts/test.sh first" >&2
    exit 1
fi
# NumPy: switch off every dispatch target above its baseline, read from NumPy itself
# so that the list fits the CPU and the NumPy at hand.
NPY_DISABLE_CPU_FEATURES="$(.venv/bin/python -c '
try:
    from numpy._core import _multiarray_umath as m
except ImportError:
    from numpy.core import _multiarray_umath as m
print(" ".join(m.__cpu_dispatch__))')"
export NPY_DISABLE_CPU_FEATURES
export ATEN_CPU_CAPABILITY=default   # torch: ATen's kernels without vector instructions
export NUMBA_CPU_NAME=generic        # numba: code for any CPU of the architecture
# numba's kernels compiled for 'generic' in a cache of their own, apart from the host's.
export NUMBA_CACHE_DIR="$PWD/.venv/numba-cache-generic"
start=$SECONDS
.venv/bin/python scripts/cpu_profile.py
.venv/bin/python -m pytest -q -m "ch00 or ch10" "$@"
echo "narrow_cpu.sh: the second CPU profile took $((SECONDS - start)) s"
