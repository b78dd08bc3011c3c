"""The authors' SiameseIM (OpenGVLab/Siamese-Image-Modeling, from a local
clone; none of it is shipped) behind our benchmarks, the side-by-side
runs and the ViT-B parity fixture: importing their code with the shims it
needs on a current stack (code.py) and driving it like ours (step.py)."""
from projects.common.authors.code import (build, build_model, checkout_problem,
                                          import_main_pretrain,
                                          import_models_sim,
                                          install_training_shims)
from projects.common.authors.step import (REL_POS_ORDER, AuthorsStep, batch,
                                          model_args)

__all__ = [
    'build', 'build_model', 'checkout_problem', 'import_main_pretrain',
    'import_models_sim', 'install_training_shims', 'REL_POS_ORDER',
    'AuthorsStep', 'batch', 'model_args'
]
