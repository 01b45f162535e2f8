"""Section A.7: the typical training loop, and the accuracy of a model on a loader."""
import torch
import torch.nn.functional as F


def train_model(model, train_loader, optimizer, num_epochs):
    """Listing A.9 as a function: ``num_epochs`` passes over ``train_loader`` (batches of
    ``(features, labels)``). Each epoch: ``model.train()``; for each batch, in order:
    ``logits = model(features)``, ``loss = F.cross_entropy(logits, labels)`` (on the logits),
    ``optimizer.zero_grad()``, ``loss.backward()``, ``optimizer.step()``, and print the book's line
    (``Epoch: 001/003 | Batch 000/002 | Train Loss: 0.75``); after the epoch, ``model.eval()``.
    The model's weights after training are what is graded; returns nothing."""
    ### BEGIN SOLUTION
    for epoch in range(num_epochs):
        model.train()
        for batch_idx, (features, labels) in enumerate(train_loader):
            logits = model(features)
            loss = F.cross_entropy(logits, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(f"Epoch: {epoch + 1:03d}/{num_epochs:03d}"
                  f" | Batch {batch_idx:03d}/{len(train_loader):03d}"
                  f" | Train Loss: {loss:.2f}")
        model.eval()
    ### END SOLUTION


def compute_accuracy(model, dataloader):
    """Listing A.10: the fraction of the examples of ``dataloader`` whose predicted class (the
    ``argmax`` of the model's logits over the classes, ``dim=1``) is their label, with the model in
    eval mode (``model.eval()``: no dropout) and no gradients. Counted over examples, not
    averaged over batches (the last batch may be smaller). Returns a float between 0 and 1."""
    ### BEGIN SOLUTION
    model = model.eval()
    correct = 0.0
    total_examples = 0
    for features, labels in dataloader:
        with torch.no_grad():
            logits = model(features)
        predictions = torch.argmax(logits, dim=1)
        compare = labels == predictions
        correct += torch.sum(compare)
        total_examples += len(compare)
    return (correct / total_examples).item()
    ### END SOLUTION
