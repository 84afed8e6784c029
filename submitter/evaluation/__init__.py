"""Accuracy evaluation of a run: decode the logged token ids, post-process like the reference, score ROUGE.

Modules: `accuracy_log` (LoadGen's mlperf_log_accuracy.json), `detokenize` (the model's tokenizer),
`sentences` (NLTK Punkt with data shipped in the package), `rouge` (scoring spread over processes),
`accuracy` (the whole evaluation and accuracy.txt).
"""
