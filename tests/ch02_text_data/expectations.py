"""What the project's tests expect of ch02_text_data (the convention: DESIGN.md, "Several
assignments, one engine, one seam"; CONTRIBUTING.md, "Adding an assignment")."""
from stated import S

# tests/test_stated_requirements.py: each requirement its student docstrings state, with the
# hidden check and the public test of it
STATED = [
    S("simple_tokenizer.SimpleTokenizerV1", "returns each token's id",
      "test_hidden_simple_tokenizer.py::test_simple_tokenizer_v1_encode",
      ("test_simple_tokenizer.py::test_tokenizer_v1_encodes_and_decodes_the_books_sentence",
       "test_simple_tokenizer.py::test_tokenizer_v1_uses_the_ids_of_its_vocabulary")),
    S("simple_tokenizer.SimpleTokenizerV1", "a word missing from the vocabulary raises ``KeyError``",
      "test_hidden_simple_tokenizer.py::test_simple_tokenizer_v1_encode",
      "test_simple_tokenizer.py::test_tokenizer_v1_knows_no_unknown_words"),
    S("simple_tokenizer.SimpleTokenizerV1", "joins the tokens of ``ids`` with single spaces",
      "test_hidden_simple_tokenizer.py::test_simple_tokenizer_v1_decode",
      "test_simple_tokenizer.py::test_tokenizer_v1_encodes_and_decodes_the_books_sentence"),
    S("simple_tokenizer.SimpleTokenizerV1", "any of the three is accepted",
      accepted=("plain student", "listing 2.4's printed punctuation in V1's decode",
                "re.findall tokens; V1 decode with the companion's : and ;")),
    S("special_tokens.SimpleTokenizerV2", "turns every token that is not in the vocabulary into ``<|unk|>`` and returns the ids",
      "test_hidden_special_tokens.py::test_simple_tokenizer_v2_encode",
      ("test_special_tokens.py::test_tokenizer_v2_on_the_books_two_texts",
       "test_special_tokens.py::test_tokenizer_v2_uses_the_ids_of_its_vocabulary")),
    S("special_tokens.SimpleTokenizerV2", "listing 2.4's shorter character class ``[.,;?!\"]`` is accepted too",
      accepted="plain student: own names, loops, dict(zip(...)), listing 2.4's printed split in V2"),
    S("special_tokens.SimpleTokenizerV2", "removes the spaces before",
      "test_hidden_special_tokens.py::test_simple_tokenizer_v2_decode",
      "test_special_tokens.py::test_tokenizer_v2_on_the_books_two_texts"),
    S("special_tokens.SimpleTokenizerV2", "is accepted too)",
      accepted="plain student: own names, loops, dict(zip(...)), listing 2.4's printed split in V2"),
    # beyond the rule's words: the dataset's windows and dtype, the loader's seed
    S("data_sampling.GPTDatasetV1", "Every window whose target fits in the text is kept",
      "test_hidden_data_sampling.py::test_gpt_dataset_v1_windows",
      "test_data_sampling.py::test_every_window_is_kept_up_to_the_last_full_one"),
    S("data_sampling.GPTDatasetV1", "two int64 tensors of shape ``(max_length,)``",
      "test_hidden_data_sampling.py::test_gpt_dataset_v1_windows",
      "test_data_sampling.py::test_every_window_is_kept_up_to_the_last_full_one"),
    S("data_sampling.GPTDatasetV1", 'allowed_special={"<|endoftext|>"}',
      "test_hidden_data_sampling.py::test_gpt_dataset_v1_special_token",
      "test_data_sampling.py::test_a_text_holding_endoftext_gets_the_special_id"),
    S("data_sampling.create_dataloader_v1", "Shuffled batches follow ``torch.manual_seed``",
      "test_hidden_data_sampling.py::test_create_dataloader_v1",
      "test_data_sampling.py::test_shuffle_and_drop_last_are_passed_on"),
    S("bpe.bpe_decode", "``bpe_decode(bpe_encode(text)) == text`` for any text",
      ("test_hidden_bpe.py::test_bpe_decode", "test_hidden_bpe.py::test_bpe_round_trip"),
      "test_bpe.py::test_decoding_gives_the_text_back"),
]

# tests/test_nbgrader_release.py: what the master notebook prints from the reference (the book's values)
BOOK_VALUES = [
    "Total number of characters: 20479",
    "Vocabulary size: 1130",
    "[1, 56, 2, 850, 988, 602, 533, 746, 5, 1126, 596, 5, 1, 67, 7, 38, 851, 1108, 754, 793, 7]",
    "KeyError: 'Hello'",
    "1132",
    "[1131, 5, 355, 1126, 628, 975, 10, 1130, 55, 988, 956, 984, 722, 988, 1131, 7]",   # <|unk|>
    "[15496, 11, 466, 345, 588, 8887, 30, 220, 50256, 554, 262, 4252, 18250, 8812, 2114, 286, 617, "
    "34680, 27271, 13]",                                                                    # BPE
    "5145",
    "x: [290, 4920, 2241, 287]",
    "y: [4920, 2241, 287, 257]",
    " and established himself ---->  in",
    "[tensor([[  40,  367, 2885, 1464]]), tensor([[ 367, 2885, 1464, 1807]])]",            # stride 1
    "[ 0.3374, -0.1778, -0.1690]",                                                          # embeddings
    "torch.Size([8, 4, 256])",
    "[33901, 86, 343, 86, 220, 959]",                                                      # exercise 2.1
]

# tests/test_public_tests.py: one wrong line in the reference that a public test catches with a
# value: (module, the line, the wrong one, what the student must read)
WRONG = ("embeddings.py", "torch.manual_seed(seed)", "torch.manual_seed(seed + 1)",
         "yours differ from the book's")
