"""A bank of buggy variants of chapter 5's reference: the mistakes students really make.

Each mutant is one edit of one module of ``solutions/ch05_pretraining`` (the exact text ``old``,
occurring exactly once in the reference, replaced by ``new``); ``parts`` is the exact set of parts
that must lose points, every other part keeps full marks: training is judged with the grader's
stand-ins for the losses, the text's ids and chapter 4's generation, and no part uses the student's
chapter-4 GPT. ``named`` is a fragment of the name the feedback must give, or None where no name fits.
``tests/test_mutants.py`` grades every mutant.

A text_tokens mistake that would make the sample printed after each epoch crash (ids without the
batch dimension, float ids, a list of lists decoded) costs training nothing: training calls the
stand-ins of text_to_token_ids and token_ids_to_text, and the mistake is charged in text_tokens once.
"""
from banks import Mutant

TT, LO, TR, DE, WE = "text_tokens", "losses", "training", "decoding", "checkpoints"
I8 = "\n        "

MUTANTS = [
    # ------------------------------------------------------------- 5.1.1 text and tokens
    Mutant("text_to_token_ids without the batch dimension", TT,
           "return torch.tensor(encoded).unsqueeze(0)", "return torch.tensor(encoded)", (TT,),
           named="without the batch dimension"),
    Mutant("text_to_token_ids without allowed_special", TT,
           'encoded = tokenizer.encode(text, allowed_special={"<|endoftext|>"})', "encoded = tokenizer.encode(text)",
           (TT,), named="allowed_special"),
    Mutant("text_to_token_ids as float ids", TT,
           "return torch.tensor(encoded).unsqueeze(0)", "return torch.tensor(encoded, dtype=torch.float32).unsqueeze(0)",
           (TT,), named="floating-point"),
    Mutant("token_ids_to_text without squeeze", TT,
           "flat = token_ids.squeeze(0)", "flat = token_ids", (TT,), named="without removing the batch dimension"),
    # ------------------------------------------------------------- 5.1.2-5.1.3 losses
    Mutant("calc_loss_batch with reduction='sum'", LO,
           "return torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())",
           "return torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten(), reduction='sum')",
           (LO,), named="the sum over the tokens"),
    Mutant("calc_loss_batch softmax before cross_entropy", LO,
           "return torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())",
           "return torch.nn.functional.cross_entropy(torch.softmax(logits, dim=-1).flatten(0, 1), target_batch.flatten())",
           (LO,), named="softmax applied before cross_entropy"),
    Mutant("calc_loss_batch returns loss.item()", LO,
           "return torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())",
           "return torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten()).item()",
           (LO,), named="as a Python number"),
    Mutant("calc_loss_loader ignores num_batches", LO,
           "        if i >= num_batches:\n            break\n", "", (LO,),
           named="does not stop after num_batches"),
    Mutant("calc_loss_loader divides by len(data_loader)", LO,
           "return total_loss / num_batches", "return total_loss / len(data_loader)", (LO,),
           named="divided by len(data_loader)"),
    Mutant("calc_loss_loader returns the sum", LO,
           "return total_loss / num_batches", "return total_loss", (LO,), named="the sum of the batches"),
    Mutant("calc_loss_loader: an empty loader gives 0", LO,
           'return float("nan")', "return 0.0", (LO,), named="empty loader answered 0"),
    Mutant("perplexity as log", LO, "return torch.exp(loss)", "return torch.log(loss)", (LO,), named="log instead of exp"),
    # ------------------------------------------------------------- 5.2 training
    Mutant("no optimizer.zero_grad()", TR,
           "            optimizer.zero_grad()\n            loss = calc_loss_batch", "            loss = calc_loss_batch",
           (TR,), named="no optimizer.zero_grad()"),
    Mutant("evaluate_model leaves the model in eval mode", TR,
           "        val_loss = calc_loss_loader(val_loader, model, device, num_batches=eval_iter)\n    model.train()",
           "        val_loss = calc_loss_loader(val_loader, model, device, num_batches=eval_iter)", (TR,),
           named="left in eval mode"),
    Mutant("evaluate_model without model.eval()", TR,
           "    model.eval()\n    with torch.no_grad():\n        train_loss", "    with torch.no_grad():\n        train_loss",
           (TR,), named="evaluated in training mode"),
    Mutant("tokens seen counted by the batch size", TR,
           "tokens_seen += input_batch.numel()", "tokens_seen += input_batch.shape[0]", (TR,),
           named="counted as the batch size"),
    Mutant("steps numbered from 1", TR, "tokens_seen, global_step = 0, -1", "tokens_seen, global_step = 0, 0", (TR,),
           named="steps numbered from 1"),
    Mutant("zero_grad between backward and step", TR,
           "            loss.backward()\n            optimizer.step()",
           "            loss.backward()\n            optimizer.zero_grad()\n            optimizer.step()", (TR,),
           named="between backward() and step()"),
    Mutant("the sample printed with 20 new tokens", TR,
           "max_new_tokens=50, context_size=context_size)", "max_new_tokens=20, context_size=context_size)", (TR,),
           named=None),
    Mutant("sample printing leaves eval mode", TR,
           '    print(token_ids_to_text(token_ids, tokenizer).replace("\\n", " "))\n    model.train()',
           '    print(token_ids_to_text(token_ids, tokenizer).replace("\\n", " "))', (TR,), named="left in eval mode"),
    # ------------------------------------------------------------- 5.3 decoding
    Mutant("temperature multiplies the logits", DE,
           "return torch.softmax(logits / temperature, dim=-1)", "return torch.softmax(logits * temperature, dim=-1)",
           (DE,), named="multiplied by the temperature"),
    Mutant("top-k keeps k - 1 tokens", DE,
           "logits = torch.where(logits < min_val,", "logits = torch.where(logits <= min_val,", (DE,),
           named="keeps k - 1"),
    Mutant("generate without cropping", DE, "idx_cond = idx[:, -context_size:]", "idx_cond = idx", (DE,),
           named="no cropping"),
    Mutant("temperature applied after softmax in generate", DE,
           "probs = torch.softmax(logits / temperature, dim=-1)", "probs = torch.softmax(logits, dim=-1) / temperature",
           (DE,), named="after the softmax"),
    Mutant("eos token appended before stopping", DE,
           "        if eos_id is not None and idx_next.numel() == 1 and idx_next.item() == eos_id:\n            break\n"
           "        idx = torch.cat((idx, idx_next), dim=1)",
           "        idx = torch.cat((idx, idx_next), dim=1)\n"
           "        if eos_id is not None and idx_next.numel() == 1 and idx_next.item() == eos_id:\n            break",
           (DE,), named="appended before stopping"),
    Mutant("sampled tokens drawn in one call", DE,
           "sample = [torch.multinomial(probas, num_samples=1).item() for _ in range(1_000)]",
           "sample = torch.multinomial(probas, num_samples=1_000, replacement=True).tolist()", (DE,),
           named="drawn in one call"),
    # ------------------------------------------------------------- 5.4-5.5 weights
    Mutant("the optimizer's state not loaded", WE,
           '    optimizer.load_state_dict(checkpoint["optimizer_state_dict"])\n', "", (WE,),
           named="optimizer's state not saved or not loaded"),
    Mutant("no model.train() after loading", WE,
           '    optimizer.load_state_dict(checkpoint["optimizer_state_dict"])\n    model.train()',
           '    optimizer.load_state_dict(checkpoint["optimizer_state_dict"])', (WE,), named="training mode after loading"),
    Mutant("the model saved alone", WE,
           'torch.save({"model_state_dict": model.state_dict(), "optimizer_state_dict": optimizer.state_dict()}, path)',
           'torch.save({"model_state_dict": model.state_dict()}, path)', (WE,), named="optimizer_state_dict' in the file"),
    Mutant("c_attn split as key, query, value", WE,
           "q_w, k_w, v_w = np.split(", "k_w, q_w, v_w = np.split(", (WE,), named="wrong order"),
    Mutant("query, key and value not transposed", WE,
           "            linear.weight = assign(linear.weight, w.T)", "            linear.weight = assign(linear.weight, w)",
           (WE,), named="not transposed"),
    Mutant("out_head not tied to wte", WE,
           '    gpt.out_head.weight = assign(gpt.out_head.weight, params["wte"])\n', "", (WE,), named="out_head not assigned"),
    Mutant("assign without the shape check", WE,
           "    if tuple(left.shape) != tuple(right.shape):\n        raise ValueError", "    if False:\n        raise ValueError",
           (WE,), named="without the shape check"),
]
