"""Public tests for sections 5.4-5.5: saving and loading weights; OpenAI's weights in a GPT.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import numpy as np
import pytest
import torch

from public_tests import expect_close, expect_equal
from stand_ins import GPTParameters, TinyGPT
from checkpoints import assign, load_model_and_optimizer, load_weights_into_gpt, save_model_and_optimizer

CFG = {"vocab_size": 13, "context_length": 5, "emb_dim": 4, "n_layers": 2, "drop_rate": 0.2, "qkv_bias": True}


def steps(model, optimizer, n, seed):
    """``n`` AdamW steps on a made-up loss, dropout drawn after ``seed``."""
    torch.manual_seed(seed)
    x = torch.arange(8).reshape(2, 4) % CFG["vocab_size"]
    for _ in range(n):
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()


def test_training_resumes_from_a_checkpoint(tmp_path):
    torch.manual_seed(0)
    model = TinyGPT(CFG)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.1)
    steps(model, optimizer, 2, seed=1)
    path = tmp_path / "model_and_optimizer.pth"
    save_model_and_optimizer(model, optimizer, path)
    expect_equal(sorted(torch.load(path)), ["model_state_dict", "optimizer_state_dict"], "the checkpoint's keys")
    steps(model, optimizer, 2, seed=2)                      # training without the break
    torch.manual_seed(9)
    resumed = TinyGPT(CFG).eval()
    again = torch.optim.AdamW(resumed.parameters(), lr=0.01, weight_decay=0.1)
    load_model_and_optimizer(resumed, again, path)
    expect_equal(resumed.training, True, "model.training after load_model_and_optimizer")
    steps(resumed, again, 2, seed=2)                        # and after it
    expect_close(resumed.tok_emb.weight.detach(), model.tok_emb.weight.detach(), "tok_emb.weight, resumed vs unbroken")


def gpt2_params(rng):
    """Made-up weights in the layout of OpenAI's GPT-2 checkpoint (section 5.5)."""
    d, v, c = CFG["emb_dim"], CFG["vocab_size"], CFG["context_length"]
    def w(*shape):
        return rng.standard_normal(shape).astype(np.float32)
    block = lambda: {"attn": {"c_attn": {"w": w(d, 3 * d), "b": w(3 * d)}, "c_proj": {"w": w(d, d), "b": w(d)}},
                     "mlp": {"c_fc": {"w": w(d, 4 * d), "b": w(4 * d)}, "c_proj": {"w": w(4 * d, d), "b": w(d)}},
                     "ln_1": {"g": w(d), "b": w(d)}, "ln_2": {"g": w(d), "b": w(d)}}
    return {"wte": w(v, d), "wpe": w(c, d), "g": w(d), "b": w(d), "blocks": [block() for _ in range(CFG["n_layers"])]}


def test_assign_checks_shapes():
    left = torch.nn.Parameter(torch.zeros(2, 3))
    new = assign(left, np.ones((2, 3), dtype=np.float32))
    expect_equal(type(new), torch.nn.Parameter, "assign's answer's type")
    expect_equal(new.detach(), torch.ones(2, 3), "assign(left, ones)")
    with pytest.raises(ValueError):
        assign(left, np.ones((3, 2), dtype=np.float32))


def test_load_weights_into_gpt():
    params = gpt2_params(np.random.default_rng(0))
    gpt = GPTParameters(CFG)
    load_weights_into_gpt(gpt, params)
    d = CFG["emb_dim"]
    block, att = params["blocks"][1], gpt.trf_blocks[1].att
    c_attn = torch.from_numpy(block["attn"]["c_attn"]["w"])
    expect_equal(att.W_query.weight.detach(), c_attn[:, :d].T, "trf_blocks[1].att.W_query.weight")
    expect_equal(att.W_key.weight.detach(), c_attn[:, d:2 * d].T, "trf_blocks[1].att.W_key.weight")
    expect_equal(att.W_value.bias.detach(), torch.from_numpy(block["attn"]["c_attn"]["b"][2 * d:]),
                 "trf_blocks[1].att.W_value.bias")
    expect_equal(gpt.trf_blocks[1].ff.layers[2].weight.detach(), torch.from_numpy(block["mlp"]["c_proj"]["w"]).T,
                 "trf_blocks[1].ff.layers[2].weight")
    expect_equal(gpt.trf_blocks[0].norm2.shift.detach(), torch.from_numpy(params["blocks"][0]["ln_2"]["b"]),
                 "trf_blocks[0].norm2.shift")
    expect_equal(gpt.out_head.weight.detach(), torch.from_numpy(params["wte"]), "out_head.weight (tied to wte)")
    expect_equal(gpt.final_norm.scale.detach(), torch.from_numpy(params["g"]), "final_norm.scale")
    expect_equal(gpt.pos_emb.weight.detach(), torch.from_numpy(params["wpe"]), "pos_emb.weight")
