# Writes OUT: a C++ file defining `const char* NAME` with the text of IN.
file(READ "${IN}" text)
file(WRITE "${OUT}" "// Generated from ${IN}; do not edit.\nextern const char* const ${NAME};\nconst char* const ${NAME} = R\"EMBED(${text})EMBED\";\n")
