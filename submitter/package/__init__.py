"""`submitter package`: a submission tree checked, scanned and archived for upload.

Modules: `packaging` (the whole step: `package_tree`), `reading` (the tree read once), `repository`
(hygiene rules), `leaks` and `patterns` (the leak scan), `allow` (the allow list), `archive` (the
tar.gz, its sha256 and manifest).
"""
