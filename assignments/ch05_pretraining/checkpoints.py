"""Sections 5.4-5.5: saving and loading weights, and OpenAI's GPT-2 weights in your GPT."""
import numpy as np
import torch


def save_model_and_optimizer(model, optimizer, path):
    """Section 5.4: save both state dicts in one file at ``path``, as the book does:
    ``torch.save({"model_state_dict": ..., "optimizer_state_dict": ...}, path)``."""
    raise NotImplementedError("save_model_and_optimizer: replace this line with your code")


def load_model_and_optimizer(model, optimizer, path, device="cpu"):
    """Section 5.4 (and exercise 5.4): load the file ``save_model_and_optimizer`` wrote into
    ``model`` and ``optimizer`` (``torch.load(path, map_location=device)``), and put the model in
    training mode, so that training goes on exactly as if it had never stopped."""
    raise NotImplementedError("load_model_and_optimizer: replace this line with your code")


def assign(left, right):
    """Section 5.5: ``right`` (a NumPy array or a tensor) as a new ``torch.nn.Parameter`` in place
    of ``left``; raises ValueError where their shapes differ (the book's message names both)."""
    raise NotImplementedError("assign: replace this line with your code")


def load_weights_into_gpt(gpt, params):
    """Listing 5.5: copy OpenAI's GPT-2 weights ``params`` into ``gpt`` (your GPTModel, or any
    module with its names), every weight through ``assign``.

    ``gpt`` is built with ``qkv_bias=True`` (GPT-2's query, key and value projections have biases).
    ``params``, as the book's ``download_and_load_gpt2`` gives it (NumPy arrays): ``wte``
    (vocab_size, emb_dim), ``wpe`` (context_length, emb_dim), ``g`` and ``b`` (the final norm's
    scale and shift), and ``blocks``, one dict per transformer block: ``attn.c_attn.w``
    (emb_dim, 3 * emb_dim) and ``attn.c_attn.b``, the query, key and value side by side in that
    order (split in three along the last axis); ``attn.c_proj``, ``mlp.c_fc``, ``mlp.c_proj``
    (``w`` and ``b``); ``ln_1`` and ``ln_2`` (``g``, ``b``). OpenAI stores each weight as
    (in_features, out_features): transposed, against torch's ``nn.Linear.weight``. The output
    head takes ``wte`` (GPT-2 ties the two).
    """
    raise NotImplementedError("load_weights_into_gpt: replace this line with your code")
