"""A bank of buggy variants of chapter 4's reference: the mistakes students really make.

Each mutant is one edit of one module of ``solutions/ch04_gpt`` (the exact text ``old``,
occurring exactly once in the reference, replaced by ``new``). ``parts`` is the exact set of
parts that must lose points: every other part keeps full marks (a FeedForward without its
second bias costs the transformer block nothing, since the block is judged with stand-ins for
its pieces, and exercise 4.2 is judged on the book's counts, or on the count a lower part's
mistake gives where that part lost points). A lower part's mistake the grader cannot model in the
part above (a GPTModel that crashes, under generate) costs that part too: nothing is credited on
the child's word. ``named`` is a fragment of the mistake's name the
feedback must print, or None where no name fits.
``tests/test_mutants.py`` grades every mutant.

Decision: GELU is the tanh approximation (the stub says so, as the book's listing 4.3 does);
the exact GELU (erf) differs by up to about 1e-3 and loses points in feed_forward, named.
Softmax before argmax in generate is no mistake (it is in the alternatives bank).
"""
from banks import Mutant


LN, FF, SC, TB, GM, GEN, EX = ("layer_norm", "feed_forward", "shortcuts", "transformer_block", "gpt_model",
                               "generate", "exercises")
I8 = "\n        "

NORM = "norm_x = (x - mean) / torch.sqrt(var + self.eps)"
GELU_LINE = ("return 0.5 * x * (1 + torch.tanh(" + I8
             + "    torch.sqrt(torch.tensor(2.0 / torch.pi)) * (x + 0.044715 * torch.pow(x, 3))" + I8 + "))")
FF_LAYERS = ('nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]),' + I8 + "    GELU()," + I8
             + '    nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"]),')
SHORTCUT_IF = "if self.use_shortcut and x.shape == layer_output.shape:"
BLOCK_FORWARD = ("shortcut = x" + I8 + "x = self.norm1(x)" + I8 + "x = self.att(x)" + I8 + "x = self.drop_shortcut(x)"
                 + I8 + "x = x + shortcut" + "\n" + I8 + "shortcut = x" + I8 + "x = self.norm2(x)" + I8
                 + "x = self.ff(x)" + I8 + "x = self.drop_shortcut(x)" + I8 + "return x + shortcut")
BLOCK_ATT = ('self.att = MultiHeadAttention(' + I8 + '    d_in=cfg["emb_dim"],' + I8 + '    d_out=cfg["emb_dim"],'
             + I8 + '    context_length=cfg["context_length"],' + I8 + '    num_heads=cfg["n_heads"],' + I8
             + '    dropout=cfg["drop_rate"],' + I8 + '    qkv_bias=cfg["qkv_bias"],' + I8 + ')')
GPT_EMB = ('self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])' + I8
           + 'self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])' + I8
           + 'self.drop_emb = nn.Dropout(cfg["drop_rate"])')
GPT_BLOCKS = 'self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])'
OUT_HEAD = 'self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)\n        ### END'
POSITIONS = "pos_embeds = self.pos_emb(torch.arange(seq_len, device=in_idx.device))"
CROP = "idx_cond = idx[:, -context_size:]"
PICK = "idx_next = torch.argmax(probas, dim=-1, keepdim=True)"
COUNT = "return vocab * emb + ctx * emb + cfg[\"n_layers\"] * block + norm + emb * vocab"
COUNT_41 = "return sum(p.numel() for p in ff.parameters()), sum(p.numel() for p in att.parameters())"

MUTANTS = [
    # ------------------------------------------------------------- 4.2 layer normalization
    Mutant("LayerNorm with the unbiased variance", LN,
           "unbiased=False)", "unbiased=True)", (LN,), named="the unbiased variance"),
    Mutant("LayerNorm with torch.var's default (Bessel's correction)", LN,
           "var = x.var(dim=-1, keepdim=True, unbiased=False)", "var = torch.var(x, dim=-1, keepdim=True)", (LN,),
           named="the unbiased variance"),
    Mutant("LayerNorm adds eps outside the square root", LN,
           NORM, "norm_x = (x - mean) / (torch.sqrt(var) + self.eps)", (LN,), named="eps added outside"),
    Mutant("LayerNorm without eps", LN,
           NORM, "norm_x = (x - mean) / torch.sqrt(var)", (LN,), named="no eps in the square root"),
    Mutant("LayerNorm with eps 1e-6", LN, "self.eps = 1e-5", "self.eps = 1e-6", (LN,), named="eps of 1e-6"),
    Mutant("LayerNorm divides by the variance", LN,
           NORM, "norm_x = (x - mean) / (var + self.eps)", (LN,), named="divided by the variance"),
    Mutant("LayerNorm swaps scale and shift", LN,
           "return self.scale * norm_x + self.shift", "return self.shift * norm_x + self.scale", (LN,),
           named="scale and shift swapped"),
    Mutant("LayerNorm forgets scale and shift", LN,
           "return self.scale * norm_x + self.shift", "return norm_x", (LN,), named="scale and shift not applied"),
    Mutant("LayerNorm over dim 0", LN,
           "mean = x.mean(dim=-1, keepdim=True)" + I8 + "var = x.var(dim=-1,",
           "mean = x.mean(dim=0, keepdim=True)" + I8 + "var = x.var(dim=0,", (LN,), named="normalised over dim 0"),
    Mutant("LayerNorm does not subtract the mean", LN, NORM, "norm_x = x / torch.sqrt(var + self.eps)", (LN,), named='the mean not subtracted'),
    Mutant("LayerNorm's scale starts at zeros", LN,
           "self.scale = nn.Parameter(torch.ones(emb_dim))", "self.scale = nn.Parameter(torch.zeros(emb_dim))", (LN,),
           named="scale starting at zeros"),
    Mutant("LayerNorm's scale and shift are plain tensors, not parameters", LN,
           "self.scale = nn.Parameter(torch.ones(emb_dim))" + I8 + "self.shift = nn.Parameter(torch.zeros(emb_dim))",
           'self.register_buffer("scale", torch.ones(emb_dim))' + I8 + 'self.register_buffer("shift", torch.zeros(emb_dim))',
           (LN,), named="no parameters registered"),
    # ------------------------------------------------------------- 4.3 GELU and the feed forward network
    Mutant("the exact GELU (erf)", FF, GELU_LINE, "return 0.5 * x * (1 + torch.erf(x / 2 ** 0.5))", (FF,),
           named="the exact GELU"),
    Mutant("ReLU instead of GELU", FF, GELU_LINE, "return torch.relu(x)", (FF,), named="ReLU instead of GELU"),
    Mutant("GELU without the factor 0.5", FF, "return 0.5 * x * (1 + torch.tanh(", "return x * (1 + torch.tanh(",
           (FF,), named="without the factor 0.5"),
    Mutant("GELU with 0.044715 * x", FF, "0.044715 * torch.pow(x, 3)", "0.044715 * x", (FF,),
           named="0.044715 * x instead of"),
    Mutant("GELU with 2 / pi instead of its square root", FF, "torch.sqrt(torch.tensor(2.0 / torch.pi))",
           "torch.tensor(2.0 / torch.pi)", (FF,), named="2 / pi instead of sqrt"),
    Mutant("GELU's constant typed 0.44715", FF, "0.044715 * torch.pow", "0.44715 * torch.pow", (FF,),
           named="mistyped"),
    Mutant("GELU by the sigmoid approximation", FF, GELU_LINE, "return x * torch.sigmoid(1.702 * x)", (FF,),
           named="sigmoid approximation"),
    Mutant("FeedForward expands to 2 * emb_dim", FF, FF_LAYERS,
           FF_LAYERS.replace("4 * cfg", "2 * cfg"), (FF,)),
    Mutant("FeedForward without an activation", FF, FF_LAYERS, FF_LAYERS.replace("GELU(),", "nn.Identity(),"),
           (FF,), named="no activation between the two linear layers"),
    Mutant("FeedForward's second linear layer without bias", FF, FF_LAYERS,
           FF_LAYERS.replace('cfg["emb_dim"]),', 'cfg["emb_dim"], bias=False),'), (FF,), named='built with bias=False'),
    Mutant("FeedForward creates its second linear layer first", FF,
           "self.layers = nn.Sequential(" + I8 + "    " + FF_LAYERS + I8 + ")",
           'second = nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"])' + I8
           + 'first = nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"])' + I8
           + "self.layers = nn.Sequential(first, GELU(), second)", (FF,), named="the second linear layer created before"),
    # ------------------------------------------------------------- 4.4 shortcut connections
    Mutant("shortcuts whatever use_shortcut says", SC, SHORTCUT_IF, "if x.shape == layer_output.shape:", (SC,),
           named="shortcuts added although use_shortcut is False"),
    Mutant("no shortcut added", SC, "x = x + layer_output", "x = layer_output", (SC,),
           named="no shortcuts although use_shortcut is True"),
    Mutant("shortcut without the shape check", SC, SHORTCUT_IF, "if self.use_shortcut:", (SC,)),
    Mutant("shortcut added in place (x += layer_output): the caller's input changed", SC, "x = x + layer_output",
           "x += layer_output", (SC,), named="an in-place operation on the caller's tensor"),
    Mutant("ReLU in the example network", SC, "layer_sizes[i + 1]), GELU())\n",
           "layer_sizes[i + 1]), nn.ReLU())\n", (SC,), named="nn.ReLU where the book's example network uses GELU"),
    Mutant("four layers in the example network", SC, "for i in range(5)", "for i in range(4)", (SC,),
           named="a loop that stops one step short"),
    Mutant("print_gradients without abs()", SC, "means[name] = param.grad.abs().mean()", "means[name] = param.grad.mean()", (SC,),
           named="without abs()"),
    Mutant("print_gradients sums the gradient", SC, "means[name] = param.grad.abs().mean()", "means[name] = param.grad.abs().sum()",
           (SC,), named="the sum instead of the mean"),
    Mutant("print_gradients backpropagates output.sum()", SC, "loss = nn.MSELoss()(output, target)",
           "loss = output.sum()", (SC,), named="a loss of output.sum()"),
    Mutant("print_gradients reports the biases too", SC, 'if "weight" in name:', "if True:", (SC,),
           named="the biases' gradients reported too", says=("returned the names ['layers.0.0.weight', 'layers.0.0.bias'",)),
    # ------------------------------------------------------------- 4.5 the transformer block
    Mutant("post-LayerNorm block", TB, BLOCK_FORWARD,
           "x = self.norm1(x + self.drop_shortcut(self.att(x)))" + I8
           + "return self.norm2(x + self.drop_shortcut(self.ff(x)))", (TB,), named="post-LayerNorm"),
    Mutant("the first shortcut missing", TB, "x = self.drop_shortcut(x)" + I8 + "x = x + shortcut",
           "x = self.drop_shortcut(x)", (TB,), named="the first shortcut missing"),
    Mutant("the second shortcut missing", TB, "return x + shortcut", "return x", (TB,),
           named="the second shortcut missing"),
    Mutant("norm1 used for both branches", TB, "x = self.norm2(x)", "x = self.norm1(x)", (TB,),
           named="norm1 used twice"),
    Mutant("dropout after the shortcut is added", TB, BLOCK_FORWARD,
           "x = self.drop_shortcut(x + self.att(self.norm1(x)))" + I8
           + "return self.drop_shortcut(x + self.ff(self.norm2(x)))", (TB,), named="dropout after adding the shortcut"),
    Mutant("dropout only after the attention", TB, "x = self.ff(x)" + I8 + "x = self.drop_shortcut(x)",
           "x = self.ff(x)", (TB,), named="dropout only after the attention"),
    Mutant("the block adds in place to its input", TB,
           "shortcut = x" + I8 + "x = self.norm1(x)" + I8 + "x = self.att(x)" + I8 + "x = self.drop_shortcut(x)"
           + I8 + "x = x + shortcut",
           "x += self.drop_shortcut(self.att(self.norm1(x)))", (TB,), named="an in-place operation on the caller's tensor"),
    Mutant("ff created before att", TB, BLOCK_ATT + I8 + "self.ff = FeedForward(cfg)",
           "self.ff = FeedForward(cfg)" + I8 + BLOCK_ATT, (TB,), named="ff created before att"),
    Mutant("the attention gets one head", TB, 'num_heads=cfg["n_heads"],', "num_heads=1,", (TB,),
           named="the block's attention built with another num_heads than cfg['n_heads']"),
    Mutant("qkv_bias not passed to the attention", TB, I8 + '    qkv_bias=cfg["qkv_bias"],', "", (TB,), named="built without cfg['qkv_bias']",
           says=(("builds its attention as MultiHeadAttention(d_in=8, d_out=8, context_length=10, dropout=0.2, "
                  "num_heads=2, qkv_bias=False); the book's is MultiHeadAttention(d_in=8, d_out=8, context_length=10, "
                  "dropout=0.2, num_heads=2, qkv_bias=True)"),)),
    Mutant("the attention without dropout", TB, '    dropout=cfg["drop_rate"],' + I8 + '    qkv_bias',
           '    dropout=0.0,' + I8 + '    qkv_bias', (TB,),
           named="the block's attention built with another dropout than cfg['drop_rate']"),
    # ------------------------------------------------------------- 4.6 the GPT model
    Mutant("no position embeddings", GM, "x = tok_embeds + pos_embeds", "x = tok_embeds", (GM,),
           named="no position embeddings added"),
    Mutant("position embeddings of the token ids", GM, POSITIONS, "pos_embeds = self.pos_emb(in_idx)", (GM,),
           named="looked up with the token ids"),
    # A GPTModel that crashes (or, for one sequence, answers what no named mistake gives) cannot carry a
    # generation: generate is then judged on the grader's own model (torch's layers, the grader's weights,
    # every token computed in the grader), so these two cost gpt_model only (issue 36). Issue 35's path
    # charged generate too; the path before it credited generate because the child's traceback named
    # gpt_model.py.
    Mutant("positions from the batch size", GM, POSITIONS,
           "pos_embeds = self.pos_emb(torch.arange(batch_size, device=in_idx.device))", (GM,),
           says=("In your `GPTModel.forward` (gpt_model.py line", "`x = tok_embeds + pos_embeds`): your `pos_embeds` "
                 "has shape (2, 16) where the book's code has shape (4, 16).")),
    Mutant("the output head as x @ out_head.weight (no transpose)", GM, "return self.out_head(x)",
           "return x @ self.out_head.weight", (GM,),
           says=("The book's `GPTModel.forward` returns a tensor of shape (2, 4, 29) there.",)),
    Mutant("no final norm", GM, "x = self.final_norm(x)\n        ", "", (GM,), named="no final norm"),
    # a GPTModel that cannot be built: generate is judged on the grader's own model (one mistake, one part)
    Mutant("GPTModel.__init__ not written yet (the book's generate beside it)", GM,
           'self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])',
           'raise NotImplementedError("GPTModel.__init__: replace this line with your code")', (GM,),
           says=("generate_text_simple is judged on the grader's own model",)),
    Mutant("GPTModel.__init__ not written yet, and generate does not crop", GM,
           'self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])',
           'raise NotImplementedError("GPTModel.__init__: replace this line with your code")', (GM, GEN),
           also=((GEN, CROP, "idx_cond = idx"),), named="no cropping"),
    Mutant("out_head with a bias", GM, OUT_HEAD, OUT_HEAD.replace("bias=False", "bias=True"), (GM,),
           named="out_head with a bias"),
    Mutant("out_head tied to tok_emb", GM, OUT_HEAD,
           OUT_HEAD.replace("\n", "\n        self.out_head.weight = self.tok_emb.weight\n", 1), (GM,),
           named="tied to the token embedding"),
    Mutant("one block repeated", GM, GPT_BLOCKS,
           'self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg)] * cfg["n_layers"])', (GM,),
           named="one block repeated"),
    Mutant("no dropout after the embeddings", GM, "x = self.drop_emb(x)\n        ", "", (GM,),
           named="no dropout after the embeddings"),
    Mutant("pos_emb created before tok_emb", GM, GPT_EMB,
           'self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])' + I8
           + 'self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])' + I8
           + 'self.drop_emb = nn.Dropout(cfg["drop_rate"])', (GM,), named="pos_emb created before tok_emb"),
    Mutant("pos_emb as large as the vocabulary", GM, 'nn.Embedding(cfg["context_length"], cfg["emb_dim"])',
           'nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])', (GM,),
           named="pos_emb.weight sized with vocab_size where the book uses context_length"),
    Mutant("the blocks run in reverse", GM, "x = self.trf_blocks(x)", "x = nn.Sequential(*reversed(self.trf_blocks))(x)",
           (GM,), named="the blocks run in reverse order"),
    # ------------------------------------------------------------- 4.7 generating text
    Mutant("generate reads the first position's logits", GEN, "logits = logits[:, -1, :]",
           "logits = logits[:, 0, :]", (GEN,), named="the first position's logits"),
    Mutant("generate crops the first tokens", GEN, CROP, "idx_cond = idx[:, :context_size]", (GEN,),
           named="cropping the first tokens"),
    Mutant("generate does not crop", GEN, CROP, "idx_cond = idx", (GEN,), named="no cropping"),
    Mutant("generate crops one token too many", GEN, CROP, "idx_cond = idx[:, -context_size + 1:]", (GEN,), named='cropping to context_size - 1',
           says=("step 1: gave the model [2, 3] tokens, expected the last 4 of the sequence so far",)),
    Mutant("generate takes the argmin", GEN, PICK, PICK.replace("argmax", "argmin"), (GEN,),
           named="argmin instead of argmax"),
    Mutant("generate one token short", GEN, "for _ in range(max_new_tokens):", "for _ in range(max_new_tokens - 1):",
           (GEN,), named='a loop that stops one step short'),
    Mutant("generate returns only the new tokens", GEN, "idx = torch.cat((idx, idx_next), dim=1)\n    return idx",
           "idx = torch.cat((idx, idx_next), dim=1)\n    return idx[:, idx.shape[1] - max_new_tokens:]", (GEN,), named='only the new tokens returned',
           says=("returned [2, 4]: only the new tokens, expected the prompt followed by them, shape [2, 7]",)),
    # ------------------------------------------------------------- exercises 4.1-4.3
    Mutant("4.1 returns the counts the other way round", EX, COUNT_41,
           "return sum(p.numel() for p in att.parameters()), sum(p.numel() for p in ff.parameters())", (EX,), named='in the other order'),
    Mutant("4.1 counts the attention without qkv_bias", EX,
           'cfg["n_heads"], cfg["qkv_bias"])\n    return sum', 'cfg["n_heads"])\n    return sum', (EX,), named="built without cfg['qkv_bias']"),
    Mutant("4.2 XL with 24 heads", EX, '"n_heads": 25', '"n_heads": 24', (EX,), named="other than that GPT-2 size's",
           says=("gpt2_config('xl'): is {'vocab_size': 50257", "'n_heads': 24, 'n_layers': 48, 'drop_rate': 0.1, 'qkv_bias': False}, "
                 "expected GPT_CONFIG_124M with emb_dim=1600, n_layers=48, n_heads=25")),
    Mutant("4.2 changes GPT_CONFIG_124M itself", EX, "return {**GPT_CONFIG_124M, **changes[size]}",
           "cfg = GPT_CONFIG_124M\n    cfg.update(changes[size])\n    return cfg", (EX,), named='GPT_CONFIG_124M changed in place'),
    Mutant("4.2 count without the output head", EX, COUNT, COUNT.replace(" + emb * vocab", ""), (EX,), named='the output head left out of the count',
           says=(": returned 4260, expected 4,704.",)),
    Mutant("4.2 count without the final norm", EX, COUNT, COUNT.replace(" + norm + ", " + "), (EX,), named='the final norm left out of the count'),
    Mutant("4.2 count forgets qkv_bias", EX, " + (3 * emb if cfg[\"qkv_bias\"] else 0)", "", (EX,), named='biases left out of the count'),
    Mutant("4.2 megabytes of 1000 * 1000 bytes", EX, "* 4 / (1024 * 1024)", "* 4 / (1000 * 1000)", (EX,), named='megabytes of 1,000 * 1,000 bytes',
           says=(": returned 0.018816, expected 0.0179 (",)),
    Mutant("4.3 shortcut dropout at drop_rate_attn", EX, 'nn.Dropout(cfg["drop_rate_shortcut"])',
           'nn.Dropout(cfg["drop_rate_attn"])', (EX,), named='the dropout rates mixed up'),
    Mutant("4.3 attention dropout at drop_rate_shortcut", EX, 'dropout=cfg["drop_rate_attn"]',
           'dropout=cfg["drop_rate_shortcut"]', (EX,), named='the dropout rates mixed up'),
    Mutant("4.3 embedding dropout at drop_rate_shortcut", EX, 'nn.Dropout(cfg["drop_rate_emb"])',
           'nn.Dropout(cfg["drop_rate_shortcut"])', (EX,), named='the dropout rates mixed up'),
]
