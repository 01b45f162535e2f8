"""Chapter 5's unseen bank: single-edit mistakes a student typing the book would make (see
``tests/unseen_bank.py``)."""
from unseen_bank import lines, mistake as M

ASSIGNMENT = "ch05_pretraining"

MUTANTS = [
    # text_tokens.py
    M("token ids returned without the batch dimension", "text_tokens",
      "return torch.tensor(encoded).unsqueeze(0)", "return torch.tensor(encoded)"),
    M("<|endoftext|> not allowed when encoding", "text_tokens",
      'encoded = tokenizer.encode(text, allowed_special={"<|endoftext|>"})', "encoded = tokenizer.encode(text)"),
    M("batch dimension squeezed at 1 instead of 0", "text_tokens",
      "flat = token_ids.squeeze(0)", "flat = token_ids.squeeze(1)"),
    # losses.py
    M("loss compares the logits with the inputs instead of the targets", "losses",
      "logits.flatten(0, 1), target_batch.flatten()", "logits.flatten(0, 1), input_batch.flatten()"),
    M("loader loss divided by the loader's length, not the batches summed", "losses",
      "return total_loss / num_batches", "return total_loss / len(data_loader)"),
    M("loader loss runs one batch too many (> instead of >=)", "losses",
      "if i >= num_batches:", "if i > num_batches:"),
    M("num_batches capped with max instead of min", "losses",
      "num_batches = min(num_batches, len(data_loader))", "num_batches = max(num_batches, len(data_loader))"),
    M("perplexity as exp(-loss)", "losses",
      "return torch.exp(loss)", "return torch.exp(-loss)"),
    # training.py
    M("evaluation's training loss computed on the validation loader", "training",
      "train_loss = calc_loss_loader(train_loader, model, device, num_batches=eval_iter)",
      "train_loss = calc_loss_loader(val_loader, model, device, num_batches=eval_iter)"),
    M("tokens seen counted as sequences (shape[0]) instead of tokens", "training",
      "tokens_seen += input_batch.numel()", "tokens_seen += input_batch.shape[0]"),
    M("global step starts at 0: steps numbered from 1", "training",
      "tokens_seen, global_step = 0, -1", "tokens_seen, global_step = 0, 0"),
    M("optimizer step before backward (two statements swapped)", "training",
      "            loss.backward()\n            optimizer.step()", "            optimizer.step()\n            loss.backward()"),
    M("sample's context size read from the embedding width", "training",
      "context_size = model.pos_emb.weight.shape[0]", "context_size = model.pos_emb.weight.shape[1]"),
    M("evaluation scheduled on tokens seen instead of steps", "training",
      "if global_step % eval_freq == 0:", "if tokens_seen % eval_freq == 0:"),
    # decoding.py
    M("temperature multiplies the logits instead of dividing them", "decoding",
      "return torch.softmax(logits / temperature, dim=-1)", "return torch.softmax(logits * temperature, dim=-1)"),
    M("top-k threshold taken from the largest logit, not the k-th", "decoding",
      "min_val = top_logits[:, -1:]", "min_val = top_logits[:, :1]"),
    M("top-k masks the k-th logit too (<= instead of <)", "decoding",
      "logits < min_val", "logits <= min_val"),
    M("sampling only above temperature 1", "decoding",
      "if temperature > 0.0:", "if temperature > 1.0:"),
    M("sample counts without minlength: tokens never drawn at the end are missing", "decoding",
      "torch.bincount(torch.tensor(sample), minlength=len(probas))", "torch.bincount(torch.tensor(sample))"),
    M("generation with top-k reads logits from the first position", "decoding",
      "        logits = logits[:, -1, :]\n        if top_k", "        logits = logits[:, 0, :]\n        if top_k"),
    # checkpoints.py
    M("model left in eval mode after loading a checkpoint", "checkpoints",
      "model.train()", "model.eval()"),
    M("query/key/value weights assigned without transposing", "checkpoints",
      "linear.weight = assign(linear.weight, w.T)", "linear.weight = assign(linear.weight, w)"),
    M("c_attn split along the rows (axis=0)", "checkpoints",
      'np.split(block["attn"]["c_attn"]["w"], 3, axis=-1)', 'np.split(block["attn"]["c_attn"]["w"], 3, axis=0)'),
    M("norm shift loaded from the gain g", "checkpoints",
      'norm.shift = assign(norm.shift, source["b"])', 'norm.shift = assign(norm.shift, source["g"])'),
    # unusual ones
    M("target batch never moved to the device (harmless on a CPU only)", "losses",
      "input_batch, target_batch = input_batch.to(device), target_batch.to(device)",
      "input_batch, target_batch = input_batch.to(device), target_batch"),
    M("sample printed with its newlines", "training",
      '.replace("\\n", " "))', ")"),
    M("1,000 samples drawn in one multinomial call (other draws than the book's)", "decoding",
      "sample = [torch.multinomial(probas, num_samples=1).item() for _ in range(1_000)]",
      "sample = torch.multinomial(probas, num_samples=1_000, replacement=True).tolist()"),
    M("assign shares memory with the NumPy array (no clone)", "checkpoints",
      "dtype=left.dtype).clone())", "dtype=left.dtype))"),
]

LINES = lines(ASSIGNMENT, MUTANTS)
