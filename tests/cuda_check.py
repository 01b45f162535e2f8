"""Every module of the solutions, moved to a GPU, gives the CPU's answers and keeps its buffers
(masks, RoPE tables, KV caches) on the GPU: an extra check for a machine that has one. Never a
test: the suite and grading run on CPUs.

    python tests/cuda_check.py [--device cuda]      exit 0: all agree; 1: one differs; 2: no such device

Each module is built on the CPU after torch.manual_seed(123), in eval mode, and run there;
a deep copy moved with .to(device) runs on the same input moved too. The answers must agree
(TF32 off) and every tensor the copy holds afterwards (parameters, buffers, caches, plain
tensor attributes) must be on the device: one left on the CPU is a module that does not move.
"""
import argparse
import copy
import importlib
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autograder.sandbox.child import _plain_tensors  # noqa: E402

SOLUTIONS = Path(__file__).resolve().parents[1] / "solutions"
# each assignment's folder, then those of the chapters it builds on (its modules import theirs)
FOLDERS = {"ch03_attention": ["ch03_attention"], "ch04_gpt": ["ch04_gpt", "ch03_attention"],
           "efficient_attention": ["efficient_attention", "ch04_gpt", "ch03_attention"]}
CFG = {"vocab_size": 50, "context_length": 12, "emb_dim": 16, "n_heads": 4, "n_layers": 2, "drop_rate": 0.1,
       "qkv_bias": False}


def cases(m):
    """(label, build the module, run it: function of (module, device) -> output tensor) per module."""
    x = torch.randn(2, 6, 8, generator=torch.Generator().manual_seed(0))
    ids = torch.randint(0, CFG["vocab_size"], (2, 5), generator=torch.Generator().manual_seed(1))

    def forward(inputs):
        return lambda module, device: module(inputs.to(device))

    def cached(chunks):  # a KV cache filled chunk by chunk: the answers of every chunk, side by side
        def run(module, device):
            outs = [module(x[:, a:b].to(device), use_cache=True) for a, b in chunks]
            return torch.cat(outs, dim=1)
        return run

    if "simple_attention" in m:  # ch03
        sa, ca, mha, ex = m["self_attention"], m["causal_attention"], m["multihead_attention"], m["exercises"]
        return [("SelfAttention_v1", lambda: sa.SelfAttention_v1(8, 4), forward(x[0])),
                ("SelfAttention_v2", lambda: sa.SelfAttention_v2(8, 4), forward(x[0])),
                ("CausalAttention", lambda: ca.CausalAttention(8, 4, 6, 0.5), forward(x)),
                ("MultiHeadAttentionWrapper", lambda: mha.MultiHeadAttentionWrapper(8, 4, 6, 0.5, 2), forward(x)),
                ("MultiHeadAttention", lambda: mha.MultiHeadAttention(8, 4, 6, 0.5, 2), forward(x)),
                ("build_gpt2_small_mha", lambda: ex.build_gpt2_small_mha(0.1),
                 forward(torch.randn(1, 5, 768, generator=torch.Generator().manual_seed(2))))]
    if "gpt_model" in m:  # ch04
        gen = m["generate"].generate_text_simple
        return [("LayerNorm", lambda: m["layer_norm"].LayerNorm(8), forward(x)),
                ("GELU", lambda: m["feed_forward"].GELU(), forward(x)),
                ("FeedForward", lambda: m["feed_forward"].FeedForward(CFG), forward(torch.randn(2, 6, 16))),
                ("TransformerBlock", lambda: m["transformer_block"].TransformerBlock(CFG), forward(torch.randn(2, 6, 16))),
                ("GPTModel", lambda: m["gpt_model"].GPTModel(CFG), forward(ids)),
                ("generate_text_simple", lambda: m["gpt_model"].GPTModel(CFG),
                 lambda module, device: gen(module, ids.to(device), 4, CFG["context_length"]))]
    eff, kv, gqa, rope, sw = (m[k] for k in ("efficient_mha", "kv_cache", "grouped_query", "rope", "sliding_window"))
    chunks = [(0, 3), (3, 4), (4, 6)]
    return [*[(name, lambda name=name: getattr(eff, name)(8, 8, 2, 6, 0.5), forward(x))
              for name in ("MultiHeadAttentionCombinedQKV", "MHAEinsum", "MHAPyTorchScaledDotProduct", "MHAPyTorchClass")],
            ("GroupedQueryAttention", lambda: gqa.GroupedQueryAttention(8, 8, 4, 2, 6, 0.5), forward(x)),
            ("MultiHeadAttentionRoPE", lambda: rope.MultiHeadAttentionRoPE(8, 8, 2, 6, 0.5), forward(x)),
            ("SlidingWindowAttention", lambda: sw.SlidingWindowAttention(8, 8, 2, 6, 3, 0.5), forward(x)),
            ("SlidingWindowAttention, cached", lambda: sw.SlidingWindowAttention(8, 8, 2, 6, 3, 0.5), cached(chunks)),
            ("kv_cache.MultiHeadAttention", lambda: kv.MultiHeadAttention(8, 8, 6, 0.5, 2), forward(x)),
            ("kv_cache.MultiHeadAttention, cached", lambda: kv.MultiHeadAttention(8, 8, 6, 0.5, 2), cached(chunks)),
            ("kv_cache.GPTModel", lambda: kv.GPTModel(CFG), forward(ids)),
            ("generate_text_simple_cached", lambda: kv.GPTModel(CFG),
             lambda module, device: kv.generate_text_simple_cached(module, ids.to(device), 4))]


def tensors(module):
    """Every tensor the module holds, by name: parameters, buffers (None ones left out) and the
    plain tensor attributes of it and its submodules (as the grader's child finds them)."""
    return {**dict(module.named_parameters()), **dict(module.named_buffers()), **_plain_tensors(module)}


def check(label, build, run, device):
    torch.manual_seed(123)
    module = build().eval()
    moved = copy.deepcopy(module).to(device)
    with torch.no_grad():
        expected, got = run(module, "cpu"), run(moved, device)
    problems = [f"{name} is on {t.device}" for name, t in tensors(moved).items() if t.device.type != torch.device(device).type]
    if got.device.type != torch.device(device).type:
        problems.append(f"its answer is on {got.device}")
    elif got.shape != expected.shape or not (torch.equal(got.cpu(), expected) if got.dtype == torch.long
                                             else torch.allclose(got.cpu(), expected, atol=1e-5, rtol=1e-4)):
        problems.append(f"answers differ: largest difference {(got.cpu().double() - expected.double()).abs().max():.3g}"
                        if got.shape == expected.shape else f"shape {tuple(got.shape)}, expected {tuple(expected.shape)}")
    print(f"{'ok  ' if not problems else 'FAIL'} {label}" + "".join(f"\n       {p}" for p in problems))
    return not problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    device = parser.parse_args(argv).device
    if device.startswith("cuda") and not torch.cuda.is_available():
        print("no CUDA device here: nothing checked")
        return 2
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(device) if device.startswith('cuda') else device}")
    ok = True
    for assignment, folders in FOLDERS.items():
        names = {p.stem for folder in folders for p in (SOLUTIONS / folder).glob("*.py")}
        for name in names:  # another chapter's module of the same name goes first
            sys.modules.pop(name, None)
        sys.path[:0] = [str(SOLUTIONS / folder) for folder in folders]
        try:
            modules = {p.stem: importlib.import_module(p.stem) for p in (SOLUTIONS / assignment).glob("*.py")
                       if not p.stem.startswith(("test_", "conftest"))}
            print(f"-- {assignment}")
            for label, build, run in cases(modules):
                ok &= check(label, build, run, device)
        finally:
            del sys.path[:len(folders)]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
