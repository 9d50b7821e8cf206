from multigpu_train import load_train_objs


def check_shapes():
    model, _ = load_train_objs()
    assert model[0].in_features == 16
