"""aclmdlRI: the state machine, models and their replay, task groups and update, capture, Build models, labels,
conditional models, task handles, graphs."""
