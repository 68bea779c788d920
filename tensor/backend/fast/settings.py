"""Every tuning constant and environment switch of the fast layer, in one place.

Each constant is a line between two ways of doing the same work, set where
the two met in ``benchmarks/`` (its scripts name which). None changes an
answer: only how the work is split, and where its memory comes from.

Environment switches (read once, at import):

=====================  ========  ===============================================
variable               default   what it does
=====================  ========  ===============================================
``TENSOR_BACKEND``     numba     ``numpy`` runs the reference backend instead
``TENSOR_FAST``        1         ``0`` runs the kernels layer alone: no fast layer
``TENSOR_SPIN``        1         ``0``: no worker threads, every op on the caller
``TENSOR_WINOGRAD``    1         ``0``: 3x3 convolutions through im2col too
``TENSOR_BLAS_THREADS`` 1        OpenBLAS threads when our threads split a product
``TENSOR_INT8_PATH``   auto      int8 kernel: ``amx``, ``vnni`` or ``portable``
``OMP_WAIT_POLICY``    PASSIVE   set if unset: numba's idle OpenMP threads sleep
=====================  ========  ===============================================

Constants (sizes in elements unless they say bytes):

======================  =====================================================
constant                what it decides
======================  =====================================================
``SMALL``               at most this many: the NumPy reference computes it
``PARALLEL_MIN``        element-copies a thread must get for a split to pay
``POOLED``              outputs from this size come from the caching allocator
``SPIN_MIN``            element-copies from which an op is shared with workers
``SHARED_CHUNKS``       chunks of ``reduce.CHUNK`` from which a sum is shared
``SOFTMAX_COST``        element-copies per element of a softmax row kernel
``LAYER_NORM_COST``     the same for layer_norm
``WINOGRAD_MIN_TILES``  2x2 output tiles from which Winograd beats im2col
``WINOGRAD_BYTES``      bytes of a Winograd step, to stay in the cache
``COPY_SPLIT_MIN``      column-matrix values from which im2col copies split
``BLAS_SPLIT_MIN``      multiply-adds from which a product is split
``ALLOCATOR_MIN_BYTES`` smaller blocks are not kept for reuse
``ALLOCATOR_MAX_BYTES`` the most the allocator keeps
``ALLOCATOR_PER_SIZE``  blocks kept per shape and dtype
``ALLOCATOR_ALIGN``     bytes a kept block's address is a multiple of
``FAST_POLLS``          checks an idle worker makes, a pause apart
``SLOW_POLLS``          then checks with a yield between, before it parks
``IN_PLACE_BLOCK``      elements per block of an in-place map (in L1)
``INT8_MACS_PER_COPY``  int8 multiply-adds that cost one element-copy
``AMX_MIN_ROWS``        share of an AMX tile's 16 rows a layer must fill
======================  =====================================================
"""

from __future__ import annotations

import os

FAST = os.environ.get("TENSOR_FAST", "1") != "0"
SPIN = os.environ.get("TENSOR_SPIN", "1") != "0"
WINOGRAD = os.environ.get("TENSOR_WINOGRAD", "1") != "0"
BLAS_THREADS = int(os.environ.get("TENSOR_BLAS_THREADS", "1"))
# "auto": VNNI where the CPU numba compiles for has it, else the portable kernel.
INT8_PATH = os.environ.get("TENSOR_INT8_PATH", "auto")

# numba's parallel kernels (the kernels layer's ``prange``, and in the fast layer
# the quantized ones) run on OpenMP. By default its idle threads spin
# for a while after each parallel loop, and on a small machine they then take
# the cores from the BLAS threads of the next matmul. Passive waiting puts
# them to sleep at once. This must be set before the process loads libgomp
# (numba at its first parallel loop, torch at import: they share it), so
# scripts that import torch first set it themselves, as benchmarks/kernels.py
# does; a value you set yourself wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# Below this, unboxing a numba call's arguments costs more than the work.
SMALL = 64
# Waking a worker costs two lock hand-offs through the kernel, so a range must
# be worth more than that (``benchmarks/reduce_threshold.py``, the add
# columns); on a machine whose other core is busy one thread wins at every
# size, so the line errs towards fewer splits.
PARALLEL_MIN = 1 << 17
SPLIT = 2 * PARALLEL_MIN  # below this no output is split, whatever the thread count
POOLED = 1 << 16
# A polling worker starts on a range almost at once, so it pays from a
# smaller size than a parked one.
SPIN_MIN = 1 << 15
# With two chunks, one each, the partial array and the combining cost more
# than the second thread saves (``benchmarks/reduce_threshold.py``).
SHARED_CHUNKS = 4
# A softmax costs about an exp per element, a layer_norm three passes.
SOFTMAX_COST, LAYER_NORM_COST = 4.0, 3.0
# Winograd transforms 16 values per filter whatever the image size; with few
# tiles that costs more than it saves (``benchmarks/conv_variants.py``).
WINOGRAD_MIN_TILES = 64
WINOGRAD_BYTES = 1 << 23
# ResNet-50's strided and late-stage im2col copies take many times longer on
# one thread than waking a worker.
COPY_SPLIT_MIN = 1 << 16
# Products below this run as one BLAS call: a hand-off costs more than it saves.
BLAS_SPLIT_MIN = 1 << 22
# Blocks below this are cheap to get fresh; the allocator keeps the large ones,
# whose first touch faults every page in.
ALLOCATOR_MIN_BYTES = 1 << 18
ALLOCATOR_MAX_BYTES = 1 << 28
ALLOCATOR_PER_SIZE = 4
ALLOCATOR_ALIGN = 64  # a cache line: no vector store of a kernel straddles two
# How long an idle worker polls: FAST_POLLS checks a pause apart (to catch the
# next op of a busy loop), then SLOW_POLLS checks with a sched_yield and 16
# pauses between them, which hands the core to any other thread meanwhile.
# A shorter while found the worker parked at every op of a loop whose ops come
# a little further apart. (GNU OpenMP, torch's, polls for a similar while.)
FAST_POLLS = 2000
SLOW_POLLS = 1000
# An in-place map computes a block into a buffer and copies it back (see
# ``tasks.in_place_task``); 4 or 8 KB stays in L1.
IN_PLACE_BLOCK = 1024
# How ``threads.spread`` weighs an int8 layer: one ``vpdpbusd`` does 64
# multiply-adds, about what a vector copy does in elements. So a layer splits
# from SPIN_MIN * 64 (2M) multiply-adds.
INT8_MACS_PER_COPY = 64
# An AMX tile takes 16 neighbouring pixels of an output row; a layer whose rows
# fill less of them (a row of 7 fills 7 of 16) runs faster on the vector kernel.
AMX_MIN_ROWS = 0.2
