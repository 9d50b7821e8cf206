FROM tensorflow/tensorflow:2.15.0-gpu  # expect: NV002
FROM tensorflow/tensorflow:2.15.0  # expect: none
