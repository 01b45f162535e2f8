"""Hidden checks for section 4.6, the GPT model (20 points).

The model runs with the grader's linear maps in place of its transformer blocks and final norm
(the reference gets the same maps): judged here are the embeddings, the dropout, the order of
the pieces and the output head; the blocks and norms are judged in their own parts."""
import pytest
import torch

from _gpt import (BUILT_FROM, built_on, calls_to, drawn_pieces, on_stand_ins, KEEP, CFGS, GPT_MISTAKES, TIED, as_dict, built, gradient_steps, judge_gradients, gpt_case, gpt_forward,
                  gpt_mistakes, live_ids, named_parameters_steps, params, run, token_ids, with_grads)
from autograder.grading.compare import expect_close, seeded, set_seed, yours_vs_expected
from autograder.grading.diagnose import book_sizes, sized
from autograder.grading.result import KnownMistake, failure
from autograder.sandbox.session import StudentFailure

points = pytest.mark.points
GPT = "gpt_model.GPTModel"


def gpt_step(let, cfg, module, spec, train=False):
    return {"let": let, "call": GPT, "args": [cfg], **on_stand_ins(spec), "params_keep": KEEP, "params": params(module),
            "train": train}


@points(6)
def test_gpt_forward(student, ref, seeds):
    """token plus position embeddings, the blocks in order, the final norm, out_head: logits for every position"""
    # (cfg, batch, num_tokens, ids below context_length: that case first, so that "positions from the
    # ids" runs there and can be named)
    cases = [(CFGS[2], 1, 6, True), (CFGS[0], 2, 5, False), (CFGS[1], 3, 10, False), ({**CFGS[0], "drop_rate": 0.3}, 2, 3, False)]

    def check():
        steps, expected = [], []
        for i, (cfg, b, n, small_ids) in enumerate(cases):
            module, spec = gpt_case(ref, cfg, seeds(f"module{i}"))
            idx = token_ids(b, n, cfg["context_length"] if small_ids else cfg["vocab_size"], seeds(f"idx{i}"))
            steps += [gpt_step(f"m{i}", cfg, module, spec),
                      {"let": f"out{i}", "call": f"m{i}", "args": [idx], "seed": 4, "return": True}]
            expected.append((idx, module, spec, cfg))
        plan = student.plan(steps, needs=GPT)
        for i, (idx, module, spec, cfg) in enumerate(expected):
            what = (f"GPTModel(vocab_size={cfg['vocab_size']}, context_length={cfg['context_length']}, emb_dim="
                    f"{cfg['emb_dim']}, n_layers={cfg['n_layers']}, drop_rate={cfg['drop_rate']}) in eval mode on "
                    f"{tuple(idx.shape)} token ids (blocks and final_norm replaced by the grader's linear maps)")
            try:
                out = plan.values[f"out{i}"]
            except StudentFailure as exc:  # a parameter of the wrong shape is read against the config's sizes
                raise sized(exc, book_sizes(("cfg",), (cfg,), {})) from None
            expect_close(out, run(module, idx), what,
                         gpt_mistakes(idx, module, spec, drop=cfg["drop_rate"], seed=4))
    check()


@points(4)
def test_gpt_dropout(student, ref, seeds):
    """in training mode, dropout(drop_rate) on the sum of the embeddings (same seed, same mask)"""
    cfg = {**CFGS[1], "drop_rate": 0.5}

    def check():
        module, spec = gpt_case(ref, cfg, seeds("module"))
        idx = token_ids(2, 7, cfg["vocab_size"], seeds("idx"))
        plan = student.plan([gpt_step("m", cfg, module, spec, train=True),
                             {"let": "out", "call": "m", "args": [idx], "seed": 123, "return": True}], needs=GPT)
        expect_close(plan.values["out"], run(module, idx, train=True, seed=123),
                     "GPTModel(drop_rate=0.5) in training mode after torch.manual_seed(123) (stand-ins for the "
                     "blocks: only drop_emb draws)", gpt_mistakes(idx, module, spec, drop=0.5, seed=123, train=True))
    check()


@points(4)
def test_gpt_structure(student, ref):
    """tok_emb, pos_emb, n_layers distinct TransformerBlocks in trf_blocks, final_norm, out_head without bias"""
    for cfg in (CFGS[1], CFGS[2]):
        n_layers = cfg["n_layers"]
        # built on the grader's stand-ins for TransformerBlock and LayerNorm, which record what they
        # are given: the model's own choices are judged here, whatever those classes do
        inject = drawn_pieces(cfg["emb_dim"])
        plan = student.plan([{"let": "m", "call": GPT, "args": [cfg], "seed": 1, "inject": inject},
                             {"let": "names", "grads": "m", "return": True},
                             {"let": "n", "len": "m.trf_blocks", "return": True}], needs=GPT)
        what = f"GPTModel(n_layers={n_layers})"
        names = list(plan.values["names"])
        if plan.values["n"] != n_layers:
            raise AssertionError(f"{what}.trf_blocks: " + yours_vs_expected(
                yours=f"{plan.values['n']} blocks", yours_are="holds", expected=f"n_layers = {n_layers}"))
        # the model's own parameters; what the blocks and the norm hold is judged in their parts
        own = sorted(n for n in names if not n.startswith(("trf_blocks.", "final_norm.")))
        book = sorted(n for n in params(built(ref.gpt_model.GPTModel, cfg, 0))
                      if not n.startswith(("trf_blocks.", "final_norm.")))
        shared = [i for i in range(1, n_layers) if not any(n.startswith(f"trf_blocks.{i}.") for n in names)]
        if shared:  # named_parameters lists a module met twice once
            raise KnownMistake(f"{what}.trf_blocks[{shared[0]}] is an earlier block again.",
                               "one block repeated ([TransformerBlock(cfg)] * n_layers shares one block's "
                               "weights; build a new block each time)")
        blocks, norms = (calls_to(plan, "m", BUILT_FROM[piece], ref) for piece in ("trf_blocks", "final_norm"))
        if len(blocks) != n_layers or any(given is None or given.get("cfg") != cfg for given in blocks):
            raise AssertionError(f"{what} builds {len(blocks)} TransformerBlock(...), not always with cfg; the book's "
                                 f"trf_blocks are {n_layers} TransformerBlock(cfg)")
        if len(norms) != 1 or any(given is None or given.get("emb_dim") != cfg["emb_dim"] for given in norms):
            raise AssertionError(f"{what} builds {len(norms)} LayerNorm(...); the book's final_norm is one "
                                 "LayerNorm(emb_dim)")
        if own == book:
            continue
        mistake = None
        if "out_head.bias" in own:
            mistake = "out_head with a bias (the book's has bias=False)"
        elif "out_head.weight" not in own and "tok_emb.weight" in own:
            mistake = TIED
        raise failure(f"{what}, besides its blocks' and final_norm's: " + yours_vs_expected(
            yours=own, yours_are="has the parameters", expected=book, expected_are="the book's are") + ".", mistake)


@points(3)
def test_gpt_seeded_init(student, ref):
    """tok_emb, pos_emb, the blocks, final_norm, out_head created in that order: the book's draw after the seed"""
    cfg = CFGS[0]
    # on stand-ins for its blocks that draw as nn.Linear draws (and torch's LayerNorm): what the
    # blocks themselves draw is judged in transformer_block
    inject = drawn_pieces(cfg["emb_dim"])
    plan = student.plan([{"let": "m", "call": GPT, "args": [cfg], "seed": 123, "inject": inject},
                         *named_parameters_steps("state", "m")], needs=GPT)
    mine = as_dict(plan.values["state"], "GPTModel")
    book = params(built_on(ref, ref.gpt_model.GPTModel, cfg, 123, inject))
    first = ("tok_emb.weight", "pos_emb.weight")
    for key in first:
        if key not in mine or mine[key].shape != book[key].shape:
            raise AssertionError(f"GPTModel has no {key} of shape {tuple(book[key].shape)}")
    if not all(torch.equal(mine[k], book[k]) for k in first):
        set_seed(123)
        pos = torch.nn.Embedding(cfg["context_length"], cfg["emb_dim"]).weight
        tok = torch.nn.Embedding(cfg["vocab_size"], cfg["emb_dim"]).weight
        swapped = torch.equal(mine["tok_emb.weight"], tok) and torch.equal(mine["pos_emb.weight"], pos)
        raise failure("GPTModel's tok_emb and pos_emb after torch.manual_seed(123) differ from the book's "
                      "draw: create tok_emb, then pos_emb, before anything else random.",
                      "pos_emb created before tok_emb" if swapped else None)
    # out_head is drawn after the blocks (their stand-ins draw what nn.Linear draws)
    if "out_head.weight" in mine and not (mine["out_head.weight"].shape == book["out_head.weight"].shape
                                          and torch.equal(mine["out_head.weight"], book["out_head.weight"])):
        raise AssertionError("GPTModel's out_head.weight after torch.manual_seed(123) differs from the book's draw: "
                             "create tok_emb, pos_emb, drop_emb, trf_blocks, final_norm, out_head in that order")


@points(3)
def test_gpt_trainable(student, ref, seeds):
    """every parameter gets the reference's gradient; the caller's token ids are left unchanged"""
    cfg = CFGS[2]
    module, spec = gpt_case(ref, cfg, seeds("module"))
    idx = token_ids(2, 4, cfg["vocab_size"], seeds("idx"))
    g = seeded(2, 4, cfg["vocab_size"], seed=seeds("g"))
    # the book's gradients, or those of the mistake the output shows (each computed here)
    models = {None: lambda: run(module, idx, grad_weight=g),
              **{name: (lambda v=variant: with_grads(params(module),
                                                      lambda w: gpt_forward(idx, module, spec, variant=v, weights=w), g))
                 for name, variant in GPT_MISTAKES.items() if name != TIED}}  # a tied model takes no out_head
    plan = student.plan([gpt_step("m", cfg, module, spec), *live_ids("idx", "m.tok_emb.weight", idx),
                         *gradient_steps("m", "idx", g)], needs=GPT)
    judge_gradients(plan, "idx", idx, params(module), models,
                    in_place="GPTModel changed the caller's token ids in place",
                    no_gradient="GPTModel: {} received no gradient from backward",
                    what="GPTModel (stand-ins for the blocks and final norm) on (2, 4) token ids",
                    gradient_of="gradient of GPTModel's {} (stand-ins for the blocks and final norm)")
