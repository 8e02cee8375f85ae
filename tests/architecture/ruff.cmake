# Runs ruff (RUFF) over the source tree (SOURCE) with its ruff.toml; fails naming the missing
# linter and how to install it when it is absent.
if(NOT EXISTS "${RUFF}")
  message(FATAL_ERROR "lint.python: no ruff at ${RUFF}; scripts/install-lint creates .venv-lint with it "
                      "(or configure with -DKILN_RUFF=<path to ruff>)")
endif()
execute_process(COMMAND "${RUFF}" check --no-cache --output-format concise WORKING_DIRECTORY "${SOURCE}"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "lint.python: ruff found the breaches above (rules: ruff.toml; `ruff check --fix` mends some)")
endif()
