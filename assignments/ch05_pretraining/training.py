"""Section 5.2: training the LLM, evaluating it along the way, and printing a sample.

Call ``calc_loss_batch``, ``calc_loss_loader``, ``generate_text_simple``, ``text_to_token_ids`` and
``token_ids_to_text`` by those names (as the book imports them, or as ``losses.calc_loss_batch``,
``generate.generate_text_simple`` and ``text_tokens.text_to_token_ids``): the grader and the public
tests hand these functions stand-ins for them (``stand_ins.py``), so that a mistake in ``losses.py``,
``text_tokens.py`` or chapter 4's ``generate.py`` costs nothing here."""
import torch

from generate import generate_text_simple  # chapter 4's, your own
from losses import calc_loss_batch, calc_loss_loader
from text_tokens import text_to_token_ids, token_ids_to_text


def evaluate_model(model, train_loader, val_loader, device, eval_iter):
    """Listing 5.3's helper: the training and validation losses (``calc_loss_loader`` over the
    first ``eval_iter`` batches of each loader), computed in eval mode (no dropout) without
    gradients; the model is back in training mode afterwards. Returns (train_loss, val_loss)."""
    raise NotImplementedError("evaluate_model: replace this line with your code")


def generate_and_print_sample(model, tokenizer, device, start_context):
    """Listing 5.3's helper: print 50 new tokens after ``start_context``, generated greedily with
    chapter 4's ``generate_text_simple`` in eval mode, with the model's context length
    (``model.pos_emb.weight.shape[0]``) as the context size, on one line (newlines printed as
    spaces); the model is back in training mode afterwards."""
    raise NotImplementedError("generate_and_print_sample: replace this line with your code")


def train_model_simple(model, train_loader, val_loader, optimizer, device, num_epochs,
                       eval_freq, eval_iter, start_context, tokenizer):
    """Listing 5.3: pretrain ``model`` for ``num_epochs`` passes over ``train_loader``.

    Each epoch: the model in training mode; for each batch, in order: clear the gradients,
    ``calc_loss_batch``, backward, one ``optimizer.step()``, and count the batch's input tokens
    as seen. Steps are numbered from 0; after every step whose number is a multiple of
    ``eval_freq``, ``evaluate_model(..., eval_iter)`` and note the two losses and the tokens
    seen so far (printed as the book does: ``Ep 1 (Step 000000): Train loss ..., Val loss ...``).
    After each epoch, ``generate_and_print_sample`` from ``start_context``.
    Returns (train_losses, val_losses, track_tokens_seen): three lists, one entry per evaluation.
    """
    raise NotImplementedError("train_model_simple: replace this line with your code")
