"""A bank of buggy variants of appendix A's reference: the mistakes students really make.

Each mutant is one edit of one module of ``solutions/appendix_a_pytorch`` (the exact text ``old``,
occurring exactly once in the reference, replaced by ``new``; ``also``: further edits of the same
submission); ``parts`` is the exact set of parts that must lose points, every other part keeps
full marks: the training loop, the accuracy and saving are judged on the grader's stand-in
network, never on the student's NeuralNetwork, and the loaders on torch's own TensorDataset.
``named`` is a fragment of the name the feedback must give, or None where no name fits.
``tests/test_mutants.py`` grades every mutant.
"""
from banks import Mutant

TB, AB, NN, DL, TL, SL = ("tensor_basics", "autograd_basics", "neural_network", "data_loaders", "training_loop",
                          "saving_loading")
FIRST_RELU = "torch.nn.Linear(num_inputs, 30),\n            torch.nn.ReLU(),"
LAST = "torch.nn.Linear(20, num_outputs),\n        )"

MUTANTS = [
    # ------------------------------------------------------------- A.2 tensors
    Mutant("tensor1d of floats", TB, "tensor1d = torch.tensor([1, 2, 3])", "tensor1d = torch.tensor([1.0, 2.0, 3.0])",
           (TB,), named="floats instead of integers"),
    Mutant("float64 instead of float32", TB, "return tensor.to(torch.float32)", "return tensor.double()", (TB,),
           named="float64"),
    Mutant("reshape as a transpose", TB, "return tensor.reshape(rows, cols)", "return tensor.T", (TB,),
           named="transpose instead of a reshape"),
    Mutant("the transpose first in the product", TB, "return tensor2d.matmul(tensor2d.T)",
           "return tensor2d.T.matmul(tensor2d)", (TB,), named="the transpose first"),
    Mutant("an elementwise product", TB, "return tensor2d.matmul(tensor2d.T)", "return tensor2d * tensor2d", (TB,),
           named="elementwise product"),
    # ------------------------------------------------------------- A.3-A.4 autograd
    Mutant("no sigmoid", AB, "return torch.sigmoid(z)", "return z", (AB,), named="no sigmoid"),
    Mutant("the bias left out", AB, "    z = x1 * w1 + b\n", "    z = x1 * w1 + 0 * b\n", (AB,), named="bias left out"),
    Mutant("the loss summed", AB, "return F.binary_cross_entropy(a, y)",
           'return F.binary_cross_entropy(a, y, reduction="sum")', (AB,), named="sum over the examples"),
    Mutant("no retain_graph", AB, "grad_L_w1 = grad(loss, w1, retain_graph=True)", "grad_L_w1 = grad(loss, w1)", (AB,),
           named="retain_graph"),
    Mutant("the gradients swapped", AB, "return grad_L_w1[0], grad_L_b[0]", "return grad_L_b[0], grad_L_w1[0]", (AB,),
           named="swapped"),
    Mutant("two backward passes", AB, "loss.backward()\n",
           "loss.backward()\n    logistic_loss(logistic_forward(x1, w1, b), y).backward()\n", (AB,),
           named="two backward passes"),
    # ------------------------------------------------------------- A.5 the network
    Mutant("softmax at the end", NN, "logits = self.layers(x)", "logits = torch.softmax(self.layers(x), dim=-1)", (NN,),
           named="softmax at the end"),
    Mutant("the first ReLU missing", NN, FIRST_RELU, "torch.nn.Linear(num_inputs, 30),\n            torch.nn.Identity(),",
           (NN,), named="first ReLU missing"),
    Mutant("a ReLU after the output layer", NN, LAST, "torch.nn.Linear(20, num_outputs),\n            torch.nn.ReLU(),\n"
           "        )", (NN,), named="ReLU after the output layer"),
    Mutant("the hidden layers swapped", NN, "torch.nn.Linear(num_inputs, 30)", "torch.nn.Linear(num_inputs, 20)", (NN,),
           named="hidden layers swapped",
           also=((NN, "torch.nn.Linear(30, 20)", "torch.nn.Linear(20, 30)"),
                 (NN, "torch.nn.Linear(20, num_outputs)", "torch.nn.Linear(30, num_outputs)"))),
    Mutant("frozen parameters counted", NN, "for p in model.parameters() if p.requires_grad)",
           "for p in model.parameters())", (NN,), named="frozen parameters counted"),
    Mutant("parameter tensors counted", NN, "return sum(p.numel() for p in model.parameters() if p.requires_grad)",
           "return len([p for p in model.parameters() if p.requires_grad])", (NN,), named="tensors counted"),
    # ------------------------------------------------------------- A.6 data loaders
    Mutant("len is the number of features", DL, "return self.labels.shape[0]", "return self.features.shape[1]", (DL,),
           named="number of features"),
    Mutant("__getitem__ without the label", DL, "return one_x, one_y", "return one_x", (DL,)),
    Mutant("the training loader not shuffled", DL, "shuffle=True, num_workers=0, drop_last=True",
           "shuffle=False, num_workers=0, drop_last=True", (DL,), named="not shuffled"),
    Mutant("the last batch kept", DL, ", drop_last=True)", ")", (DL,), named="smaller batch kept"),
    Mutant("the test loader shuffled", DL, "batch_size=batch_size, shuffle=False", "batch_size=batch_size, shuffle=True",
           (DL,), named="test examples shuffled"),
    Mutant("batch size fixed at 2", DL, "DataLoader(dataset=train_ds, batch_size=batch_size",
           "DataLoader(dataset=train_ds, batch_size=2", (DL,), named="batches of 2"),
    # ------------------------------------------------------------- A.7 training and accuracy
    Mutant("no zero_grad", TL, "            optimizer.zero_grad()\n", "", (TL,), named="zero_grad"),
    Mutant("no model.train()", TL, "        model.train()\n", "", (TL,), named="model.train() missing"),
    Mutant("softmax before cross_entropy", TL, "            loss = F.cross_entropy(logits, labels)",
           "            loss = F.cross_entropy(torch.softmax(logits, dim=1), labels)", (TL,), named="softmax before"),
    Mutant("one epoch too few", TL, "for epoch in range(num_epochs):", "for epoch in range(num_epochs - 1):", (TL,),
           named="one epoch too few"),
    Mutant("accuracy in training mode", TL, "    model = model.eval()\n", "", (TL,), named="eval mode"),
    Mutant("accuracy as the mean of the batches'", TL, "correct += torch.sum(compare)",
           "correct += torch.sum(compare) / len(compare)", (TL,), named="mean of the batches",
           also=((TL, "total_examples += len(compare)", "total_examples += 1"),)),
    Mutant("argmax over the batch", TL, "torch.argmax(logits, dim=1)", "torch.argmax(logits, dim=0)", (TL,)),
    # ------------------------------------------------------------- A.8 saving and loading
    Mutant("the whole model saved", SL, "    torch.save(model.state_dict(), path)", "    torch.save(model, path)", (SL,),
           named="whole model saved"),
    Mutant("load_model returns nothing", SL, "    return model\n", "", (SL,), named="not returned"),
    Mutant("the file read but not loaded", SL, "    model.load_state_dict(torch.load(path))", "    torch.load(path)", (SL,)),
]
