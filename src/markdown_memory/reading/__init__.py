"""How stored sections become answers: path and heading resolution (:mod:`.resolve`), the
outline, a section's verbatim lines and paging (:mod:`.sections`)."""
