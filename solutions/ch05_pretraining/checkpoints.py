"""Sections 5.4-5.5: saving and loading weights, and OpenAI's GPT-2 weights in your GPT."""
import numpy as np
import torch


def save_model_and_optimizer(model, optimizer, path):
    """Section 5.4: save both state dicts in one file at ``path``, as the book does:
    ``torch.save({"model_state_dict": ..., "optimizer_state_dict": ...}, path)``."""
    ### BEGIN SOLUTION
    torch.save({"model_state_dict": model.state_dict(), "optimizer_state_dict": optimizer.state_dict()}, path)
    ### END SOLUTION


def load_model_and_optimizer(model, optimizer, path, device="cpu"):
    """Section 5.4 (and exercise 5.4): load the file ``save_model_and_optimizer`` wrote into
    ``model`` and ``optimizer`` (``torch.load(path, map_location=device)``), and put the model in
    training mode, so that training goes on exactly as if it had never stopped."""
    ### BEGIN SOLUTION
    checkpoint = torch.load(path, map_location=device)
    model.load_state_dict(checkpoint["model_state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    model.train()
    ### END SOLUTION


def assign(left, right):
    """Section 5.5: ``right`` (a NumPy array or a tensor) as a new ``torch.nn.Parameter`` in place
    of ``left``; raises ValueError where their shapes differ (the book's message names both)."""
    ### BEGIN SOLUTION
    if tuple(left.shape) != tuple(right.shape):
        raise ValueError(f"Shape mismatch. Left: {tuple(left.shape)}, Right: {tuple(right.shape)}")
    return torch.nn.Parameter(torch.as_tensor(np.asarray(right), dtype=left.dtype).clone())
    ### END SOLUTION


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
    ### BEGIN SOLUTION
    gpt.pos_emb.weight = assign(gpt.pos_emb.weight, params["wpe"])
    gpt.tok_emb.weight = assign(gpt.tok_emb.weight, params["wte"])
    for b, block in enumerate(params["blocks"]):
        layer = gpt.trf_blocks[b]
        q_w, k_w, v_w = np.split(block["attn"]["c_attn"]["w"], 3, axis=-1)
        q_b, k_b, v_b = np.split(block["attn"]["c_attn"]["b"], 3, axis=-1)
        for linear, w, bias in ((layer.att.W_query, q_w, q_b), (layer.att.W_key, k_w, k_b),
                                (layer.att.W_value, v_w, v_b)):
            linear.weight = assign(linear.weight, w.T)
            linear.bias = assign(linear.bias, bias)
        for linear, source in ((layer.att.out_proj, block["attn"]["c_proj"]), (layer.ff.layers[0], block["mlp"]["c_fc"]),
                               (layer.ff.layers[2], block["mlp"]["c_proj"])):
            linear.weight = assign(linear.weight, source["w"].T)
            linear.bias = assign(linear.bias, source["b"])
        for norm, source in ((layer.norm1, block["ln_1"]), (layer.norm2, block["ln_2"])):
            norm.scale = assign(norm.scale, source["g"])
            norm.shift = assign(norm.shift, source["b"])
    gpt.final_norm.scale = assign(gpt.final_norm.scale, params["g"])
    gpt.final_norm.shift = assign(gpt.final_norm.shift, params["b"])
    gpt.out_head.weight = assign(gpt.out_head.weight, params["wte"])
    ### END SOLUTION
