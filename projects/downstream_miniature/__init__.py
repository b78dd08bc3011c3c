"""Table 2 in miniature: the shipped ViTDet Mask R-CNN (COCO, LVIS) and
UperNet (ADE20k) configs fine-tuned on miniature datasets painted from
Fashion-MNIST (``layouts``, ``scenes``), and the study that runs them."""
