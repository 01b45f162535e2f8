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
    ### BEGIN SOLUTION
    model.eval()
    with torch.no_grad():
        train_loss = calc_loss_loader(train_loader, model, device, num_batches=eval_iter)
        val_loss = calc_loss_loader(val_loader, model, device, num_batches=eval_iter)
    model.train()
    return train_loss, val_loss
    ### END SOLUTION


def generate_and_print_sample(model, tokenizer, device, start_context):
    """Listing 5.3's helper: print 50 new tokens after ``start_context``, generated greedily with
    chapter 4's ``generate_text_simple`` in eval mode, with the model's context length
    (``model.pos_emb.weight.shape[0]``) as the context size, on one line (newlines printed as
    spaces); the model is back in training mode afterwards."""
    ### BEGIN SOLUTION
    model.eval()
    context_size = model.pos_emb.weight.shape[0]
    encoded = text_to_token_ids(start_context, tokenizer).to(device)
    with torch.no_grad():
        token_ids = generate_text_simple(model=model, idx=encoded, max_new_tokens=50, context_size=context_size)
    print(token_ids_to_text(token_ids, tokenizer).replace("\n", " "))
    model.train()
    ### END SOLUTION


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
    ### BEGIN SOLUTION
    train_losses, val_losses, track_tokens_seen = [], [], []
    tokens_seen, global_step = 0, -1
    for epoch in range(num_epochs):
        model.train()
        for input_batch, target_batch in train_loader:
            optimizer.zero_grad()
            loss = calc_loss_batch(input_batch, target_batch, model, device)
            loss.backward()
            optimizer.step()
            tokens_seen += input_batch.numel()
            global_step += 1
            if global_step % eval_freq == 0:
                train_loss, val_loss = evaluate_model(model, train_loader, val_loader, device, eval_iter)
                train_losses.append(train_loss)
                val_losses.append(val_loss)
                track_tokens_seen.append(tokens_seen)
                print(f"Ep {epoch + 1} (Step {global_step:06d}): Train loss {train_loss:.3f}, Val loss {val_loss:.3f}")
        generate_and_print_sample(model, tokenizer, device, start_context)
    return train_losses, val_losses, track_tokens_seen
    ### END SOLUTION
