"""Chapter 5's checks credit only what the grader computes too (issue 35's rule): fakes that would
pass a check written on the child's word earn nothing here, and cost nothing elsewhere.

Each starts from the reference and fakes one piece of work: training that reports plausible
losses without taking a step, a checkpoint kept in the child's memory instead of a file (save
and load written as a pair that never touch the disk), a stand-in model patched inside the child
so that every answer agrees with itself, and a chapter-4 generate_text_simple that is wrong
(chapter 5 does not grade it: it costs nothing here). Issue 43's routes: a save that writes no file
with a load reading the module's own ``torch`` (replaced, so that the grader's "torch.load" once ran
the submission's), a sample that prints nothing beside a broken generate.py, a generate that stops
after two new tokens whenever an eos_id is given; issue 44's: a loss mistake no catalogue names,
and the book's own top-k line.
"""
import pytest

from banks import edited_sources, grade_sources, reference_sources

A = "ch05_pretraining"
TRAIN_BODY = "    train_losses, val_losses, track_tokens_seen = [], [], []\n"
CHECKPOINTS = ('def save_model_and_optimizer(model, optimizer, path):', 'def assign(left, right):')

CASES = {
    # lists of the right lengths and plausible numbers, and no step taken
    "training that reports losses without taking a step": (
        [("training.py", (TRAIN_BODY, "    return train_losses, val_losses, track_tokens_seen\n"),
          "    steps = sum(1 for _ in train_loader) * num_epochs\n"
          "    evals = [s for s in range(steps) if s % eval_freq == 0]\n"
          "    first = evaluate_model(model, train_loader, val_loader, device, eval_iter)\n"
          "    seen = [(s + 1) * train_loader[0][0].numel() for s in evals]\n"
          "    return [first[0] * 0.9 ** k for k in range(len(evals))], [first[1]] * len(evals), seen\n"
          "    train_losses, val_losses, track_tokens_seen = [], [], []\n"),
         ("training.py", "    return train_losses, val_losses, track_tokens_seen\n", "")],
        {"training": 9}),     # evaluate_model and the sample are real: their 9 points stay
    # save and load as a pair that keeps the objects in memory: nothing is written to the file
    "a checkpoint kept in the child's memory": (
        [("checkpoints.py", CHECKPOINTS,
          "_KEPT = {}\n\n\ndef save_model_and_optimizer(model, optimizer, path):\n"
          "    _KEPT[str(path)] = (model.state_dict(), optimizer.state_dict())\n"
          "    open(path, 'wb').close()\n\n\n"
          "def load_model_and_optimizer(model, optimizer, path, device='cpu'):\n"
          "    state, opt = _KEPT.get(str(path), (None, None))\n"
          "    if state is not None:\n"
          "        model.load_state_dict(state)\n"
          "        optimizer.load_state_dict(opt)\n"
          "    model.train()\n\n\n")],
        {"checkpoints": 6}),  # assign and load_weights_into_gpt are real: their 6 points stay
    # every stand-in's answer replaced inside the child: the child agrees with itself, not with the grader
    "the stand-in GPT patched to answer zeros": (
        [("text_tokens.py", "import torch\n",
          "import torch\nimport stand_ins\nstand_ins.TinyGPT.forward = "
          "lambda self, idx: torch.zeros(*idx.shape, self.out_head.out_features, requires_grad=True)\n")],
        None),
    # issue 43: nothing written; the module's own `torch` keeps the state and answers its own load
    "a save that writes no file, with the module's torch.load replaced": (
        [("checkpoints.py", CHECKPOINTS,
          "_KEPT = {}\n\n\nclass _Torch:\n    def __getattr__(self, name):\n        return getattr(__import__('torch'), name)\n\n"
          "    def load(self, path, *args, **kwargs):\n        return _KEPT[str(path)]\n\n"
          "    def save(self, obj, path, *args, **kwargs):\n        _KEPT[str(path)] = obj\n\n\n"
          "torch = _Torch()\n\n\n"
          "def save_model_and_optimizer(model, optimizer, path):\n"
          "    torch.save({'model_state_dict': model.state_dict(), 'optimizer_state_dict': optimizer.state_dict()}, path)\n\n\n"
          "def load_model_and_optimizer(model, optimizer, path, device='cpu'):\n"
          "    checkpoint = torch.load(path)\n"
          "    model.load_state_dict(checkpoint['model_state_dict'])\n"
          "    optimizer.load_state_dict(checkpoint['optimizer_state_dict'])\n    model.train()\n\n\n")],
        {"checkpoints": 6}),
    # issue 43: the sample's only work is model.train(); generate.py (chapter 4's) is broken too
    "a sample that prints nothing, beside a broken generate.py": (
        [("training.py", ("def generate_and_print_sample(", "def train_model_simple("),
          "def generate_and_print_sample(model, tokenizer, device, start_context):\n    model.train()\n\n\n"),
         ("generate.py", "idx_next = torch.argmax(probas, dim=-1, keepdim=True)", "raise RuntimeError('broken')")],
        {"training": 27}),
    # issue 43: eos always taken as the third new token (an id of the vocabulary), whatever it is
    "a generate that stops after two new tokens whenever eos_id is given": (
        [("decoding.py", "    for _ in range(max_new_tokens):\n",
          "    for step in range(max_new_tokens):\n"
          "        if eos_id is not None and step == 2 and eos_id < model.out_head.out_features:\n            break\n")],
        {"decoding": 21}),
    # issue 44: a loss mistake no catalogue names costs the losses part only
    "calc_loss_batch with the targets reordered": (
        [("losses.py", "return torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())",
          "return torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.T.flatten())")],
        {"losses": 4}),
    # issue 44: the book's listing 5.4 (a batch of one's min_val) keeps every point
    "the book's top-k line": (
        [("decoding.py", "min_val = top_logits[:, -1:]", "min_val = top_logits[:, -1]")], {}),
}



@pytest.mark.parametrize("name", list(CASES))
def test_a_faked_piece_of_work_earns_nothing(grader, tmp_path, name):
    edits, parts = CASES[name]
    result = grade_sources(grader, A, tmp_path / "s", edited_sources(A, edits))
    got = {part: earned for part, (earned, _) in result["extra_data"]["parts"].items()}
    full = {part: total for part, (_, total) in result["extra_data"]["parts"].items()}
    if parts is None:  # the patch reaches every check that runs a stand-in GPT: only what needs none stays
        # perplexity and the empty loader, softmax_with_temperature and print_sampled_tokens run no model
        assert got["losses"] == 4 and got["training"] == 0 and got["decoding"] == 8, got
        assert got["text_tokens"] == full["text_tokens"] and got["checkpoints"] < full["checkpoints"], got
        return
    for part, total in full.items():
        assert got[part] == parts.get(part, total), (name, got)


def test_a_wrong_chapter_4_generate_costs_nothing_here(grader, tmp_path):
    """generate_text_simple (chapter 4's, the student's own) only prints the sample after each epoch."""
    sources = reference_sources(A)
    old = "idx_next = torch.argmax(probas, dim=-1, keepdim=True)"
    assert sources["generate.py"].count(old) == 1
    sources["generate.py"] = sources["generate.py"].replace(old, "idx_next = torch.argmin(probas, dim=-1, keepdim=True)")
    result = grade_sources(grader, A, tmp_path / "s", sources)
    assert result["score"] == result["max_score"], result["extra_data"]["parts"]
