"""Chapter 2's unseen bank: single-edit mistakes a student typing the book would make (see
``tests/unseen_bank.py``)."""
from unseen_bank import lines, mistake as M

ASSIGNMENT = "ch02_text_data"

MUTANTS = [
    # simple_tokenizer.py
    M("whitespace kept: tokens filtered on truthiness without strip()", "simple_tokenizer",
      "return [item.strip() for item in preprocessed if item.strip()]", "return [item for item in preprocessed if item]"),
    M("vocabulary not sorted", "simple_tokenizer",
      "all_words = sorted(set(preprocessed))", "all_words = list(set(preprocessed))"),
    M("vocabulary numbered from 1", "simple_tokenizer",
      "return {token: integer for integer, token in enumerate(all_words)}",
      "return {token: integer for integer, token in enumerate(all_words, start=1)}"),
    M("inverse vocabulary from enumerate: assumes ids 0, 1, 2, ... in order", "simple_tokenizer",
      "self.int_to_str = {i: s for s, i in vocab.items()}", "self.int_to_str = {i: s for i, s in enumerate(vocab)}"),
    M("decode substitutes ' \\1': the spaces before punctuation stay", "simple_tokenizer",
      "return re.sub(r'\\s+([,.?!\"()\\'])', r'\\1', text)", "return re.sub(r'\\s+([,.?!\"()\\'])', r' \\1', text)"),
    M("encode keeps the empty strings of the split", "simple_tokenizer",
      "preprocessed = [item.strip() for item in preprocessed if item.strip()]",
      "preprocessed = [item.strip() for item in preprocessed]"),
    # special_tokens.py
    M("special tokens added as <|unk|> then <|endoftext|>", "special_tokens",
      "all_tokens.extend([ENDOFTEXT, UNK])", "all_tokens.extend([UNK, ENDOFTEXT])"),
    M("unknown-word test looks in int_to_str: every word becomes <|unk|>", "special_tokens",
      "item if item in self.str_to_int else UNK", "item if item in self.int_to_str else UNK"),
    M("decode regex without its group: the punctuation is deleted", "special_tokens",
      "return re.sub(r'\\s+([,.:;?!\"()\\'])', r'\\1', text)", "return re.sub(r'\\s+[,.:;?!\"()\\']', r'', text)"),
    # bpe.py
    M("<|endoftext|> encoded as plain text (disallowed_special=())", "bpe",
      'return tokenizer.encode(text, allowed_special={"<|endoftext|>"})', "return tokenizer.encode(text, disallowed_special=())"),
    M("decode joins the ids decoded one by one (breaks multi-byte characters)", "bpe",
      "return tokenizer.decode(ids)", 'return "".join(tokenizer.decode([i]) for i in ids)'),
    # data_sampling.py
    M("target of the pair one id short", "data_sampling",
      "y = token_ids[1:context_size + 1]", "y = token_ids[1:context_size]"),
    M("desired id one past the one that follows the context", "data_sampling",
      "desired = token_ids[i]", "desired = token_ids[i + 1]"),
    M("dataset windows step by max_length, ignoring stride", "data_sampling",
      "len(token_ids) - max_length, stride)", "len(token_ids) - max_length, max_length)"),
    M("dataset targets not shifted: the same window as the inputs", "data_sampling",
      "target_chunk = token_ids[i + 1:i + max_length + 1]", "target_chunk = token_ids[i:i + max_length]"),
    M("data loader always shuffles", "data_sampling",
      "shuffle=shuffle, drop_last=drop_last", "shuffle=True, drop_last=drop_last"),
    # embeddings.py
    M("embedding layer seeded with 123 whatever the seed", "embeddings",
      "    torch.manual_seed(seed)\n", "    torch.manual_seed(123)\n"),
    M("position embedding with vocab_size rows", "embeddings",
      "self.pos_embedding_layer = nn.Embedding(context_length, output_dim)",
      "self.pos_embedding_layer = nn.Embedding(vocab_size, output_dim)"),
    M("positions counted by the batch size (shape[0]) instead of the tokens", "embeddings",
      "torch.arange(inputs.shape[-1], device=inputs.device)", "torch.arange(inputs.shape[0], device=inputs.device)"),
    # exercises.py
    M("exercise 2.1 pieces as bytes (decode_single_token_bytes)", "exercises",
      "pieces = [tokenizer.decode([i]) for i in integers]", "pieces = [tokenizer.decode_single_token_bytes(i) for i in integers]"),
    M("exercise 2.2's first batch shuffled", "exercises",
      "shuffle=False)", "shuffle=True)"),
    # unusual ones
    M("V2 splits on every hyphen, not only on double dashes", "special_tokens",
      "|--|\\s)', text)", "|-|\\s)', text)"),
    M("data loader always drops the last batch", "data_sampling",
      "drop_last=drop_last,", "drop_last=True,"),
]

LINES = lines(ASSIGNMENT, MUTANTS)
