"""FAISS IndexFlatIP for bench:peers, as a child process of the bench.

argv: vectors file, queries file (raw float32, row after row), dim, k.
Vectors and queries are scaled to unit length first (cosine as inner product,
not timed). Then one JSON line per request on stdin, one JSON answer each:
  {"time": {"nq": 64, "omp": 2, "blas": 2, "calls": 3}} -> {"ms": per call}
  {"ids": {"nq": 64}}                                    -> {"ids": [[row, ...], ...]}
"omp" threads (faiss.omp_set_num_threads) share out the queries and the
top-k heaps; "blas" threads (OpenBLAS) the sgemm FAISS runs from 20 queries.
"""
import ctypes
import json
import sys
import time

import faiss
import numpy as np

SETTLE_SECONDS = 0.25


def load(path, dim):
    return np.fromfile(path, dtype=np.float32).reshape(-1, dim)


def openblas():
    """OpenBLAS's thread count and core name, where libopenblas is the BLAS."""
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        return lib
    except OSError:
        return None


def main():
    vectors_path, queries_path, dim, k = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    vectors, queries = load(vectors_path, dim), load(queries_path, dim)
    faiss.normalize_L2(vectors)
    faiss.normalize_L2(queries)
    index = faiss.IndexFlatIP(dim)
    index.add(vectors)
    blas = openblas()

    def set_threads(omp, blas_threads):
        faiss.omp_set_num_threads(omp)
        if blas:
            blas.openblas_set_num_threads(blas_threads)

    ready = {"ready": True, "faiss": faiss.__version__, "numpy": np.__version__, "vectors": index.ntotal,
             "blasCore": blas.openblas_get_corename().decode() if blas else "unknown"}
    print(json.dumps(ready), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        if "time" in request:
            nq, omp, blas_threads, calls = (request["time"][key] for key in ("nq", "omp", "blas", "calls"))
            set_threads(omp, blas_threads)
            batch = np.ascontiguousarray(queries[:nq])
            t0 = time.perf_counter()
            for _ in range(calls):
                index.search(batch, k)
            answer = {"ms": (time.perf_counter() - t0) * 1000 / calls}
            if max(omp, blas_threads) > 1:
                # OpenBLAS's idle threads spin for about 0.15 s after a call:
                # let that pass, so it does not slow the bench's next case.
                time.sleep(SETTLE_SECONDS)
        else:
            set_threads(1, 1)
            _, ids = index.search(np.ascontiguousarray(queries[:request["ids"]["nq"]]), k)
            answer = {"ids": ids.tolist()}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
