"""Public tests for section 4.6: the GPT model (listing 4.7) and its size.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import tiktoken
import torch

from gpt_model import GPT_CONFIG_124M, GPTModel
from layer_norm import LayerNorm
from transformer_block import TransformerBlock
from public_tests import expect_close, expect_equal

SMALL = {"vocab_size": 40, "context_length": 6, "emb_dim": 8, "n_heads": 2, "n_layers": 3, "drop_rate": 0.0,
         "qkv_bias": False}


def book_batch():
    tokenizer = tiktoken.get_encoding("gpt2")
    batch = torch.stack([torch.tensor(tokenizer.encode(txt)) for txt in ("Every effort moves you", "Every day holds a")])
    expect_equal(batch.tolist(), [[6109, 3626, 6100, 345], [6109, 1110, 6622, 257]], 'the book\'s batch')
    return batch


def test_book_logits(gpt_124m):
    model, state = gpt_124m()
    batch = book_batch()
    model.train()
    torch.set_rng_state(state)  # the book runs the batch right after building the model, with dropout on
    with torch.no_grad():
        out = model(batch)
    expect_equal(out.shape, (2, 4, 50257), 'the shape of the logits')
    expect_close(out[0, 0, :3], torch.tensor([0.3613, 0.4222, -0.0711]), 'the first logits of the first token', atol=1e-4)
    expect_close(out[0, 0, -3:], torch.tensor([0.3483, 0.4661, -0.2838]), 'the last logits of the first token', atol=1e-4)
    expect_close(out[1, 3, :3], torch.tensor([-0.1565, 0.3926, 0.3288]), 'the first logits of the second text\'s last token', atol=1e-4)


def test_book_parameter_count_and_size(gpt_124m):
    model, _ = gpt_124m()
    total_params = sum(p.numel() for p in model.parameters())
    expect_equal(total_params, 163_009_536, 'the number of parameters')
    assert model.tok_emb.weight.shape == model.out_head.weight.shape == (50257, 768), "tok_emb and out_head are 50257 x 768"
    total_params_gpt2 = total_params - sum(p.numel() for p in model.out_head.parameters())
    expect_equal(total_params_gpt2, 124_412_160, "out_head has no bias")
    expect_equal(f"{total_params * 4 / (1024 * 1024):.2f}", "621.83", 'the size in MB')


def test_graded_structure_and_distinct_blocks():
    torch.manual_seed(4)
    model = GPTModel(SMALL)
    assert isinstance(model.trf_blocks, torch.nn.Sequential) and len(model.trf_blocks) == 3, "trf_blocks is an nn.Sequential of n_layers blocks"
    assert all(isinstance(block, TransformerBlock) for block in model.trf_blocks), "each block is a TransformerBlock"
    expect_equal(len({id(block) for block in model.trf_blocks}), 3, "n_layers distinct blocks, not one block repeated")
    assert isinstance(model.final_norm, LayerNorm) and model.out_head.bias is None, "final_norm is a LayerNorm and out_head has no bias"
    assert model.pos_emb.weight.shape == (6, 8) and model.drop_emb.p == 0.0, "pos_emb is context_length x emb_dim and drop_emb uses drop_rate"
    names = [n for n, _ in model.named_parameters() if ".att." not in n]
    assert names[:2] == ["tok_emb.weight", "pos_emb.weight"] and names[-3:] == [
        "final_norm.scale", "final_norm.shift", "out_head.weight"], "the parameters in the book's order: tok_emb, pos_emb, the blocks, final_norm, out_head"
    expect_equal(sum(n.startswith("trf_blocks.2.") for n in names), 8, 'the number of parameters of the last block, attention aside')


def test_forward_wiring_on_a_short_input():
    torch.manual_seed(5)
    model = GPTModel(SMALL).eval()
    idx = torch.tensor([[3, 1, 4], [15, 9, 2]])  # 3 tokens, context_length 6
    with torch.no_grad():
        logits = model(idx)
        expect_equal(idx.tolist(), [[3, 1, 4], [15, 9, 2]], "forward must not change in_idx")
        x = model.tok_emb(idx) + model.pos_emb(torch.arange(3))
        for block in model.trf_blocks:
            x = block(x)
        expected = model.out_head(model.final_norm(x))
    expect_equal(logits.shape, (2, 3, 40), 'the shape of the logits')
    expect_close(logits, expected, 'the logits: embeddings, positions, blocks, final norm, out_head', atol=1e-5)


def test_created_in_the_book_order():
    torch.manual_seed(6)
    model = GPTModel(SMALL)
    torch.manual_seed(6)
    tok_emb, pos_emb = torch.nn.Embedding(40, 8), torch.nn.Embedding(6, 8)
    assert torch.equal(model.tok_emb.weight, tok_emb.weight) and torch.equal(model.pos_emb.weight, pos_emb.weight), "tok_emb then pos_emb are created first, in the book's order"
    for _ in range(3):
        TransformerBlock(SMALL)
    LayerNorm(8)
    expect_equal(model.out_head.weight, torch.nn.Linear(8, 40, bias=False).weight, 'out_head\'s weights, created last')
