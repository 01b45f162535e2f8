"""A bank of buggy variants of chapter 2's reference: the mistakes students really make.

Each mutant is one edit of one module of ``solutions/ch02_text_data`` (the exact text ``old``,
occurring exactly once in the reference, replaced by ``new``). ``parts`` is the exact set of
parts that must lose points (every other part keeps full marks: a data loader's mistake costs
exercise 2.2 nothing, since that exercise is judged against the student's own loader);
``named`` a fragment of the mistake's name the feedback must print, or None where no name
fits. ``tests/test_mutants.py`` grades every mutant.
"""
from banks import Mutant


ST, SP, BPE, DS, EMB, EX = ("simple_tokenizer", "special_tokens", "bpe", "data_sampling", "embeddings", "exercises")

# The split as each function writes it (preprocess at four spaces, the tokenizers' encode at eight).
SPLIT = r"""re.split(r'([,.:;?_!"()\']|--|\s)', text)"""
PRE = "    preprocessed = " + SPLIT + "\n    return"
ENC1 = "        preprocessed = " + SPLIT + "\n        preprocessed = [item.strip() for item in preprocessed if item.strip()]\n        return"
ENC2_UNK = "        preprocessed = [item if item in self.str_to_int else UNK for item in preprocessed]"
V1_SUB = r"""return re.sub(r'\s+([,.?!"()\'])', r'\1', text)"""
V2_SUB = r"""return re.sub(r'\s+([,.:;?!"()\'])', r'\1', text)"""

MUTANTS = [
    # ------------------------------------------------------------- 2.2-2.3 the split, the vocabulary, V1
    Mutant("preprocess splits on listing 2.4's printed characters: ' ( ) : _ stay attached", ST,
           PRE, PRE.replace(r"""[,.:;?_!"()\']""", r"""[.,;?!"]"""), (ST,), named="the split of listing 2.4 as printed"),
    Mutant("preprocess drops the punctuation (no capturing group)", ST,
           PRE, PRE.replace("r'([,.", "r'(?:[,."), (ST,), named="punctuation dropped"),
    Mutant("preprocess keeps whitespace and empty strings", ST,
           "return [item.strip() for item in preprocessed if item.strip()]", "return list(preprocessed)", (ST,),
           named="whitespace and empty strings kept"),
    Mutant("preprocess does not split off --", ST,
           PRE, PRE.replace("|--|", "|"), (ST,), named="'--' not split off"),
    Mutant("preprocess splits on whitespace only", ST,
           PRE, PRE.replace(r"""([,.:;?_!"()\']|--|\s)""", r"(\s)"), (ST,), named="split on whitespace only"),
    Mutant("build_vocab numbers the tokens in the order they first appear", ST,
           "all_words = sorted(set(preprocessed))", "all_words = list(dict.fromkeys(preprocessed))", (ST,),
           named="first appear"),
    Mutant("build_vocab counts ids from 1", ST,
           "return {token: integer for integer, token in enumerate(all_words)}",
           "return {token: integer for integer, token in enumerate(all_words, start=1)}", (ST,),
           named="counted from 1"),
    Mutant("build_vocab numbers the sorted list with its repeats", ST,
           "all_words = sorted(set(preprocessed))", "all_words = sorted(preprocessed)", (ST,), named="repeats"),
    Mutant("build_vocab sorts without regard to case", ST,
           "all_words = sorted(set(preprocessed))", "all_words = sorted(set(preprocessed), key=str.lower)", (ST,),
           named="without regard to case"),
    Mutant("SimpleTokenizerV1.encode splits with listing 2.4's printed characters", ST,
           ENC1, ENC1.replace(r"""[,.:;?_!"()\']""", r"""[.,;?!"]"""), (ST,), named="the split of listing 2.4 as printed"),
    Mutant("SimpleTokenizerV1.decode joins with '' instead of ' '", ST,
           'text = " ".join([self.int_to_str[i] for i in ids])\n        return re.sub(r\'\\s+([,.?!',
           'text = "".join([self.int_to_str[i] for i in ids])\n        return re.sub(r\'\\s+([,.?!', (ST,),
           named="joined with ''"),
    Mutant("SimpleTokenizerV1.decode leaves the spaces before punctuation", ST,
           V1_SUB, "return text", (ST,), named="spaces before punctuation left in"),
    Mutant("SimpleTokenizerV1 looks tokens up by position, not by id", ST,
           "self.int_to_str = {i: s for s, i in vocab.items()}", "self.int_to_str = list(vocab)", (ST,),
           named="looked up by position"),
    # ------------------------------------------------------------- 2.4 special tokens, V2
    Mutant("the special tokens put first", SP,
           "all_tokens.extend([ENDOFTEXT, UNK])", "all_tokens = [ENDOFTEXT, UNK] + all_tokens", (SP,),
           named="put first"),
    Mutant("<|unk|> added before <|endoftext|>", SP,
           "all_tokens.extend([ENDOFTEXT, UNK])", "all_tokens.extend([UNK, ENDOFTEXT])", (SP,),
           named="<|unk|> before <|endoftext|>"),
    Mutant("only <|unk|> added to the vocabulary", SP,
           "all_tokens.extend([ENDOFTEXT, UNK])", "all_tokens.append(UNK)", (SP,), named="only <|unk|> added"),
    Mutant("SimpleTokenizerV2.encode has no <|unk|>: a KeyError on unknown words", SP,
           ENC2_UNK, "", (SP,), named="no <|unk|> for unknown words"),
    Mutant("SimpleTokenizerV2.encode drops unknown words", SP,
           ENC2_UNK, "        preprocessed = [item for item in preprocessed if item in self.str_to_int]", (SP,),
           named="unknown words dropped"),
    Mutant("SimpleTokenizerV2.encode maps unknown words to <|endoftext|>", SP,
           ENC2_UNK, ENC2_UNK.replace("else UNK", "else ENDOFTEXT"), (SP,), named="mapped to <|endoftext|>"),
    Mutant("SimpleTokenizerV2.decode joins with ''", SP,
           'text = " ".join([self.int_to_str[i] for i in ids])\n        return re.sub(r\'\\s+([,.:;',
           'text = "".join([self.int_to_str[i] for i in ids])\n        return re.sub(r\'\\s+([,.:;', (SP,),
           named="joined with ''"),
    Mutant("SimpleTokenizerV2.decode leaves the spaces before punctuation", SP,
           V2_SUB, "return text", (SP,), named="spaces before punctuation left in"),
    # ------------------------------------------------------------- 2.5 BPE
    Mutant("bpe_encode without allowed_special", BPE,
           'return tokenizer.encode(text, allowed_special={"<|endoftext|>"})', "return tokenizer.encode(text)", (BPE,),
           named="without allowed_special"),
    Mutant("bpe_encode with encode_ordinary: <|endoftext|> as plain text", BPE,
           'return tokenizer.encode(text, allowed_special={"<|endoftext|>"})',
           "return tokenizer.encode_ordinary(text)", (BPE,), named="encoded as plain text"),
    Mutant("bpe_encode with disallowed_special=(): <|endoftext|> as plain text", BPE,
           'return tokenizer.encode(text, allowed_special={"<|endoftext|>"})',
           "return tokenizer.encode(text, disallowed_special=())", (BPE,), named="encoded as plain text"),
    Mutant("bpe_decode decodes each id on its own (breaks characters of several bytes)", BPE,
           "return tokenizer.decode(ids)", 'return "".join(tokenizer.decode([i]) for i in ids)', (BPE,),
           named="each id decoded on its own"),
    # ------------------------------------------------------------- 2.6 data sampling
    Mutant("input_target_pair: targets not shifted", DS,
           "y = token_ids[1:context_size + 1]", "y = token_ids[:context_size]", (DS,), named="targets not shifted"),
    Mutant("next_word_pairs starts with an empty context", DS,
           "for i in range(1, context_size + 1):", "for i in range(context_size):", (DS,), named="contexts from 0"),
    Mutant("GPTDatasetV1: targets not shifted", DS,
           "target_chunk = token_ids[i + 1:i + max_length + 1]", "target_chunk = token_ids[i:i + max_length]", (DS,),
           named="targets not shifted"),
    Mutant("GPTDatasetV1 ignores the stride (a window at every token)", DS,
           "for i in range(0, len(token_ids) - max_length, stride):", "for i in range(0, len(token_ids) - max_length):",
           (DS,), named="a window at every token"),
    Mutant("GPTDatasetV1 drops the last full window", DS,
           "for i in range(0, len(token_ids) - max_length, stride):",
           "for i in range(0, len(token_ids) - max_length - 1, stride):", (DS,), named="the last full window dropped"),
    Mutant("GPTDatasetV1 runs one window past the end", DS,
           "for i in range(0, len(token_ids) - max_length, stride):",
           "for i in range(0, len(token_ids) - max_length + 1, stride):", (DS,), named="one window too many"),
    Mutant("GPTDatasetV1 as printed in listing 2.5: no allowed_special", DS,
           'token_ids = tokenizer.encode(txt, allowed_special={"<|endoftext|>"})', "token_ids = tokenizer.encode(txt)",
           (DS,), named="without allowed_special"),
    Mutant("GPTDatasetV1 stores int32 rows", DS,
           "self.input_ids.append(torch.tensor(input_chunk))\n            self.target_ids.append(torch.tensor(target_chunk))",
           "self.input_ids.append(torch.tensor(input_chunk, dtype=torch.int32))\n"
           "            self.target_ids.append(torch.tensor(target_chunk, dtype=torch.int32))", (DS,)),
    Mutant("create_dataloader_v1 does not pass shuffle on", DS,
           "shuffle=shuffle, drop_last=drop_last,", "drop_last=drop_last,", (DS,), named="shuffle not passed on"),
    Mutant("create_dataloader_v1 does not pass drop_last on", DS,
           "shuffle=shuffle, drop_last=drop_last,", "shuffle=shuffle,", (DS,), named="drop_last not passed on"),
    Mutant("create_dataloader_v1 does not pass batch_size on", DS,
           "return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle,", "return DataLoader(dataset, shuffle=shuffle,",
           (DS,), named="batch_size not passed on"),
    # ------------------------------------------------------------- 2.7-2.8 embeddings
    Mutant("create_embedding_layer seeds with 123 whatever seed is given", EMB,
           "torch.manual_seed(seed)\n    return torch.nn.Embedding", "torch.manual_seed(123)\n    return torch.nn.Embedding",
           (EMB,), named="the seed ignored"),
    Mutant("create_embedding_layer does not seed", EMB,
           "torch.manual_seed(seed)\n    return torch.nn.Embedding", "return torch.nn.Embedding", (EMB,)),
    Mutant("InputEmbeddings counts positions from 1", EMB,
           "torch.arange(inputs.shape[-1], device=inputs.device)",
           "torch.arange(1, inputs.shape[-1] + 1, device=inputs.device)", (EMB,), named="positions counted from 1"),
    Mutant("InputEmbeddings does not add the positions", EMB,
           "return token_embeddings + pos_embeddings", "return token_embeddings", (EMB,),
           named="position embeddings not added"),
    Mutant("InputEmbeddings' position table has vocab_size rows", EMB,
           "self.pos_embedding_layer = nn.Embedding(context_length, output_dim)",
           "self.pos_embedding_layer = nn.Embedding(vocab_size, output_dim)", (EMB,)),
    # ------------------------------------------------------------- exercises
    Mutant("bpe_pieces decodes the whole list for each piece", EX,
           "pieces = [tokenizer.decode([i]) for i in integers]", "pieces = [tokenizer.decode(integers) for i in integers]",
           (EX,), named="decoded from the whole list"),
    Mutant("bpe_pieces gives bytes (decode_single_token_bytes)", EX,
           "pieces = [tokenizer.decode([i]) for i in integers]",
           "pieces = [tokenizer.decode_single_token_bytes(i) for i in integers]", (EX,), named="as bytes"),
    Mutant("first_batch leaves the loader shuffled", EX,
           "stride=stride,\n                                      shuffle=False)", "stride=stride)", (EX,)),
    Mutant("first_batch returns the second batch", EX,
           "inputs, targets = next(iter(dataloader))",
           "data_iter = iter(dataloader)\n    next(data_iter)\n    inputs, targets = next(data_iter)", (EX,)),
]
