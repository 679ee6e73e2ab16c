"""Every compiled kernel has numba cache files of its own (kernels/options.py).

numba names a function's cache files after its module, qualified name and first line and keys their
entries by signature and bytecode, not by the compile options (numba issue #6845): a serial and a
parallel kernel made from one Python function loaded each other's machine code (a Truco row-11 job
crashed with a segmentation fault in a serial regret matching that had loaded the parallel code).
"""

import importlib
import json
import os
import pkgutil
import subprocess
import sys

import numba

import strongsolve
from strongsolve.kernels import cfr


def _project_kernels():
    """Every numba dispatcher defined at module level in strongsolve (each counted in its own module)."""
    kernels = []
    for info in pkgutil.walk_packages(strongsolve.__path__, "strongsolve."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if isinstance(obj, numba.core.dispatcher.Dispatcher) and obj.py_func.__module__ == module.__name__:
                kernels.append((module.__name__, name, obj))
    return kernels


def test_no_two_kernels_share_cache_files():
    kernels = _project_kernels()
    names = {(module, name) for module, name, _ in kernels}
    # the serial and parallel twins made from one function are among them
    assert {("strongsolve.kernels.cfr", "regret_matching"),
            ("strongsolve.kernels.cfr", "regret_matching_parallel"),
            ("strongsolve.games.g2048.encoding.compact_ids", "_decode"),
            ("strongsolve.games.g2048.encoding.compact_ids", "_decode_parallel")} <= names
    assert len(kernels) > 50
    owners = {}
    for module, name, kernel in kernels:
        f = kernel.py_func
        owners.setdefault((f.__module__, f.__qualname__, f.__code__.co_firstlineno), set()).add(name)
    assert {k: v for k, v in owners.items() if len(v) > 1} == {}
    assert cfr.regret_matching.py_func.__qualname__ == "_regret_matching_py__serial"
    assert cfr.regret_matching_parallel.py_func.__qualname__ == "_regret_matching_py__parallel"


_CALL = """
import json, sys
import numpy as np
from strongsolve.kernels import cfr
kernel = getattr(cfr, sys.argv[1])
regret = np.array([1.0, -2.0, 3.0, 0.0, 0.0]); ptr = np.array([0, 3, 5]); out = np.empty(5)
kernel(regret, ptr, out)
print(json.dumps({"hits": sum(kernel.stats.cache_hits.values()),
                  "misses": sum(kernel.stats.cache_misses.values()), "out": out.tolist()}))
"""


def _call(kernel_name, cache_dir):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    done = subprocess.run([sys.executable, "-c", _CALL, kernel_name], env=env, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_parallel_twin_does_not_feed_the_serial_kernel(tmp_path):
    # a fresh cache: the parallel regret matching compiles and saves first; the serial one must
    # compile its own (a miss), and find that one on the next start (a hit)
    parallel = _call("regret_matching_parallel", tmp_path)
    serial = _call("regret_matching", tmp_path)
    again = _call("regret_matching", tmp_path)
    assert (parallel["hits"], parallel["misses"]) == (0, 1)
    assert (serial["hits"], serial["misses"]) == (0, 1)
    assert (again["hits"], again["misses"]) == (1, 0)
    # regret matching of sets {0, 1, 2} (regrets 1, -2, 3) and {3, 4} (none positive: uniform)
    expected = [0.25, 0.0, 0.75, 0.5, 0.5]
    for run in (parallel, serial, again):
        assert run["out"] == expected
