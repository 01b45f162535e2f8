"""Public tests for section 2.6: the sliding window over The Verdict, with the book's numbers.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import torch

import data_sampling
from data_sampling import GPTDatasetV1, create_dataloader_v1, input_target_pair, next_word_pairs
from simple_tokenizer import read_verdict
from public_tests import expect_equal

BOOK_INPUTS = torch.tensor([[40, 367, 2885, 1464], [1807, 3619, 402, 271], [10899, 2138, 257, 7026],
                            [15632, 438, 2016, 257], [922, 5891, 1576, 438], [568, 340, 373, 645],
                            [1049, 5975, 284, 502], [284, 3285, 326, 11]])
BOOK_TARGETS = torch.tensor([[367, 2885, 1464, 1807], [3619, 402, 271, 10899], [2138, 257, 7026, 15632],
                             [438, 2016, 257, 922], [5891, 1576, 438, 568], [340, 373, 645, 1049],
                             [5975, 284, 502, 284], [3285, 326, 11, 287]])


def test_input_target_pairs_from_token_50(gpt2):
    enc_text = gpt2.encode(read_verdict())
    expect_equal(len(enc_text), 5145, 'the number of token ids in The Verdict')
    enc_sample = enc_text[50:]
    x, y = input_target_pair(enc_sample, 4)
    expect_equal((list(x), list(y)), ([290, 4920, 2241, 287], [4920, 2241, 287, 257]), 'input_target_pair(enc_sample, 4)')
    expect_equal([(list(c), d) for c, d in next_word_pairs(enc_sample, 4)], [
        ([290], 4920), ([290, 4920], 2241), ([290, 4920, 2241], 287), ([290, 4920, 2241, 287], 257)], '[(list(c), d) for c, d in next_word_pairs(enc_sample, 4)]')


def test_first_and_second_batch_with_stride_1(gpt2):
    data_iter = iter(create_dataloader_v1(read_verdict(), batch_size=1, max_length=4, stride=1, shuffle=False))
    first, second = next(data_iter), next(data_iter)
    expect_equal(first[0], torch.tensor([[40, 367, 2885, 1464]]), 'the first batch\'s inputs')
    expect_equal(first[1], torch.tensor([[367, 2885, 1464, 1807]]), 'the first batch\'s targets')
    expect_equal(second[0], torch.tensor([[367, 2885, 1464, 1807]]), 'the second batch\'s inputs')
    expect_equal(second[1], torch.tensor([[2885, 1464, 1807, 3619]]), 'the second batch\'s targets')


def test_batch_of_8_with_stride_4(gpt2):
    inputs, targets = next(iter(create_dataloader_v1(read_verdict(), batch_size=8, max_length=4, stride=4,
                                                     shuffle=False)))
    assert torch.equal(inputs, BOOK_INPUTS) and torch.equal(targets, BOOK_TARGETS), "the first batch (batch_size=8, max_length=4, stride=4) differs from the book's inputs and targets"


def test_every_window_is_kept_up_to_the_last_full_one(gpt2):
    ids = gpt2.encode(read_verdict())[:23]
    # the grader hands GPTDatasetV1 the tokenizer through the module's own `import tiktoken`
    tokenizer = data_sampling.tiktoken.get_encoding("gpt2")
    dataset = GPTDatasetV1(gpt2.decode(ids), tokenizer, max_length=4, stride=3)
    # windows start at 0, 3, ..., 18: the last one's target ends on the text's last id
    expect_equal(len(dataset), 7, 'the number of windows (max_length=4, stride=3)')
    for k in range(len(dataset)):
        x, y = dataset[k]
        assert x.dtype == y.dtype == torch.int64, "each window's ids are torch.int64 tensors"
        assert x.tolist() == ids[3 * k:3 * k + 4] and y.tolist() == ids[3 * k + 1:3 * k + 5], "window k starts at id 3 * k (stride=3), its target one id later"


def test_a_text_holding_endoftext_gets_the_special_id(gpt2):
    text = "The end. <|endoftext|> A new story begins here, and it goes on."
    ids = gpt2.encode(text, allowed_special={"<|endoftext|>"})
    assert 50256 in ids, "the text's ids hold <|endoftext|>'s 50256"
    dataset = GPTDatasetV1(text, gpt2, max_length=4, stride=4)
    expect_equal([dataset[k][0].tolist() for k in range(len(dataset))], [ids[i:i + 4] for i in range(0, len(ids) - 4, 4)], 'the windows of a text holding <|endoftext|>')


def test_shuffle_and_drop_last_are_passed_on(gpt2):
    text = read_verdict()[:2000]
    windows = len(GPTDatasetV1(text, gpt2, 8, 8))
    assert windows % 5, "a text whose last batch is short"
    batches = list(create_dataloader_v1(text, batch_size=5, max_length=8, stride=8, shuffle=False,
                                        drop_last=False))
    expect_equal([len(inputs) for inputs, _ in batches], [5] * (windows // 5) + [windows % 5], 'the batch sizes with drop_last=False')
    kept = list(create_dataloader_v1(text, batch_size=5, max_length=8, stride=8, shuffle=False))
    expect_equal([len(inputs) for inputs, _ in kept], [5] * (windows // 5), 'the batch sizes with drop_last=True')
    torch.manual_seed(1)
    shuffled = torch.cat([inputs for inputs, _ in create_dataloader_v1(text, batch_size=5, max_length=8,
                                                                         stride=8, drop_last=False)])
    in_order = torch.cat([inputs for inputs, _ in batches])
    assert not torch.equal(shuffled, in_order), "shuffle=True (the default) must shuffle the windows"
    expect_equal(sorted(map(tuple, shuffled.tolist())), sorted(map(tuple, in_order.tolist())), 'the shuffled windows, sorted, beside the windows in order')
