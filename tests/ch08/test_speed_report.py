"""The compiled table of benchmarks/speed.py: the figures the chapter 8 lesson
includes. Fed made-up timings, it must divide by the copies timed beside each
case and judge the chain's targets as issue 14 sets them."""

import importlib.util
from pathlib import Path

SPEED = Path(__file__).resolve().parents[2] / "benchmarks" / "speed.py"


def load_speed():
    spec = importlib.util.spec_from_file_location("speed_under_test", SPEED)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timings(speed, chain_1e6: float, memory_copy_s: float) -> dict:
    """A compiled group's table: every case at 1 ms, but the chain at 1e6 compiled in
    ``chain_1e6`` s, torch eager 1 ms, and each memory copy taking ``memory_copy_s``."""
    big = 8 * 10**8
    table = {}
    for workload in speed.WORKLOADS:
        for n in speed.SIZES:
            case = f"{workload}, {speed.size_name(n)}"
            for column in ("tensor", "torch", "torch THP", "torch compiled",
                           "torch THP compiled"):
                table[(case, column)] = [{"seconds": 1e-3}]
            compiled = chain_1e6 if case == "chain, 1e6" else 1e-3
            table[(case, "tensor compiled")] = [{"seconds": compiled}]
            # A same-size copy at 100 GB/s, and a memory copy of ``big`` bytes.
            table[(f"copy before {case}", "tensor")] = [
                {"seconds": 8 * n / 100e9, "bytes": 8 * n}]
            table[(f"memory copy before {case}", "tensor")] = [
                {"seconds": memory_copy_s, "bytes": big}]
    return table


def chain_row(lines: list[str], size: str) -> list[str]:
    row = next(line for line in lines if line.startswith(f"| chain, {size} |"))
    return [cell.strip() for cell in row.strip("|").split("|")]


def test_the_chain_at_1e6_is_judged_against_the_memory_copy():
    speed = load_speed()
    # 8e6 bytes in 320 us is 25 GB/s; the memory copy moves 8e8 bytes in 32 ms, 25 GB/s.
    lines = speed.compiled_table(timings(speed, 320e-6, 32e-3), {})
    cells = chain_row(lines, "1e6")
    assert cells[9] == "25.0"  # minifx GB/s
    assert cells[10] == "100% (25.0)"  # of the memory copy
    assert cells[11] == "25% (100.0)"  # of the same-size copy, in cache
    assert cells[12] == "torch eager <= 0.5; torch.compile <= 1.0; memory copy >= 70%"


def test_a_slow_chain_is_marked_missed():
    speed = load_speed()
    # 8e6 bytes in 800 us is 10 GB/s: 40% of the memory copy, and 0.8 of torch eager.
    cells = chain_row(speed.compiled_table(timings(speed, 800e-6, 32e-3), {}), "1e6")
    assert cells[10] == "40% (25.0)"
    assert cells[12] == ("torch eager <= 0.5 missed; torch.compile <= 1.0; "
                         "memory copy >= 70% missed")


def test_a_busy_machine_is_not_judged():
    speed = load_speed()
    cells = chain_row(speed.compiled_table(timings(speed, 800e-6, 32e-3), {}, busy=True),
                      "1e6")
    assert cells[12].endswith("(not judged)") and "missed" not in cells[12]


def test_the_memory_copy_is_four_times_the_largest_cache(tmp_path):
    speed = load_speed()
    for index, size in (("index0", "48K"), ("index2", "512K"), ("index3", "32768K")):
        (tmp_path / index).mkdir()
        (tmp_path / index / "size").write_text(size + "\n")
    assert speed.last_level_cache_bytes(tmp_path) == 32 << 20
    assert speed.last_level_cache_bytes(tmp_path / "missing") == 32 << 20  # the fallback
    # Each float32 array of the copy is four times this machine's largest cache.
    assert speed.memory_copy_elements() * 4 == 4 * speed.last_level_cache_bytes()
