"""aclmdlRI calls: execute, capture and task update, Build models, labels, conditional models, introspection and
editing, names and callbacks."""
