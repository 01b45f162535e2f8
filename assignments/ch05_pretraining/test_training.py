"""Public tests for section 5.2: training the LLM (listing 5.3).

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import copy
import importlib

import pytest
import torch

import stand_ins
from public_tests import expect_close, expect_equal
from stand_ins import (STAND_INS, TinyGPT, stand_in_generate, stand_in_loss_batch, stand_in_loss_loader,
                       stand_in_text_to_token_ids, stand_in_token_ids_to_text)
from training import evaluate_model, generate_and_print_sample, train_model_simple

CFG = {"vocab_size": 40, "context_length": 6, "emb_dim": 8, "drop_rate": 0.5}  # ids below 40: one ASCII character each


@pytest.fixture(autouse=True)
def stand_ins_for_what_training_calls(monkeypatch):
    """As the grader does: your calc_loss_batch, calc_loss_loader, chapter 4's generate_text_simple,
    text_to_token_ids and token_ids_to_text replaced by stand_ins.py's, by those names, wherever
    training calls them from (a mistake in losses.py, generate.py or text_tokens.py is their own
    tests' to show, and costs nothing here)."""
    for target, source in STAND_INS.items():
        module, name = target.split(".")
        monkeypatch.setattr(importlib.import_module(module), name, getattr(stand_ins, source.split(".")[1]),
                            raising=False)


def tiny(seed=0):
    torch.manual_seed(seed)
    return TinyGPT(CFG)


def batches(n, seed, batch_size=2, num_tokens=5):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, CFG["vocab_size"], (n, batch_size, num_tokens + 1), generator=g)
    return [(row[:, :-1].contiguous(), row[:, 1:].contiguous()) for row in ids]  # as a DataLoader stacks them


def test_evaluate_model_in_eval_mode_and_back():
    model, train, val = tiny(), batches(3, 1), batches(2, 2)
    expected = copy.deepcopy(model).eval()
    losses = evaluate_model(model, train, val, "cpu", eval_iter=2)
    expect_close(torch.tensor(losses), torch.tensor([stand_in_loss_loader(train, expected, "cpu", 2),
                                                     stand_in_loss_loader(val, expected, "cpu", 2)]),
                 "evaluate_model(..., eval_iter=2): (train loss, val loss) without dropout")
    expect_equal(model.training, True, "model.training after evaluate_model")


def test_sample_in_eval_mode_and_back(capsys, tokenizer):
    model = tiny()
    generate_and_print_sample(model, tokenizer, "cpu", "A")
    expect_equal(model.training, True, "model.training after generate_and_print_sample")
    ids = stand_in_generate(model.eval(), stand_in_text_to_token_ids("A", tokenizer), 50, CFG["context_length"])
    expect_equal(capsys.readouterr().out, stand_in_token_ids_to_text(ids, tokenizer).replace("\n", " ") + "\n",
                 "what generate_and_print_sample printed")


def book_steps(train, val, inline=False):
    """The steps of train_model_simple written out: the book's order, an evaluation after steps 0,
    2 and 4 (with the stand-ins' loss, as your training has it here). ``inline``: each step's loss
    the book's cross-entropy, for a training that writes it out instead of calling calc_loss_batch
    (right too: the grader accepts both). Returns (the three lists, the model trained)."""
    mine = tiny()
    opt = torch.optim.AdamW(mine.parameters(), lr=0.01, weight_decay=0.1)
    torch.manual_seed(5)
    expected, seen, step = ([], [], []), 0, 0
    for _ in range(2):
        mine.train()
        for x, y in train:
            opt.zero_grad()
            loss = (torch.nn.functional.cross_entropy(mine(x).flatten(0, 1), y.flatten()) if inline
                    else stand_in_loss_batch(x, y, mine, "cpu"))
            loss.backward()
            opt.step()
            seen += x.numel()
            if step % 2 == 0:
                mine.eval()
                expected[0].append(stand_in_loss_loader(train, mine, "cpu", 1))
                expected[1].append(stand_in_loss_loader(val, mine, "cpu", 1))
                expected[2].append(seen)
                mine.train()
            step += 1
    return expected, mine


def test_training_takes_the_books_steps(tokenizer):
    train, val = batches(3, 1), batches(2, 2)
    model = tiny()
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.1)
    torch.manual_seed(5)
    result = train_model_simple(model, train, val, optimizer, "cpu", num_epochs=2, eval_freq=2, eval_iter=1,
                                start_context="A", tokenizer=tokenizer)
    expected, mine = book_steps(train, val)
    written_out = book_steps(train, val, inline=True)
    if torch.allclose(model.out_head.weight.detach(), written_out[1].out_head.weight.detach(), atol=1e-5):
        expected, mine = written_out
    expect_equal(len(result), 3, "train_model_simple returns (train_losses, val_losses, track_tokens_seen)")
    expect_close(torch.tensor(result[0]), torch.tensor(expected[0]), "train_losses")
    expect_close(torch.tensor(result[1]), torch.tensor(expected[1]), "val_losses")
    expect_equal(list(result[2]), expected[2], "track_tokens_seen")
    expect_close(model.out_head.weight.detach(), mine.out_head.weight.detach(), "out_head.weight after training")
