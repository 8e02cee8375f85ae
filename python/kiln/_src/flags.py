"""tf.app.flags / tf.flags: absl-style command-line flags. DEFINE_* registers a flag;
FLAGS parses sys.argv on first use (or tf.app.run parses it) and gives each value by name.
--flag=value, --flag value, --flag / --noflag for booleans, --helpfull / --help."""
import sys


class Error(Exception):
    pass


class UnrecognizedFlagError(Error):
    pass


class IllegalFlagValueError(Error):
    pass


class _Flag:
    def __init__(self, name, default, help_text, parse, kind):
        self.name, self.default, self.help, self.parse, self.kind = name, default, help_text, parse, kind
        self.value = default
        self.present = False


class _FlagValues:
    def __init__(self):
        self.__dict__["_flags"] = {}
        self.__dict__["_parsed"] = False

    def _define(self, flag):
        if flag.name in self._flags:
            raise Error("flag --%s is defined twice" % flag.name)
        self._flags[flag.name] = flag

    def __call__(self, argv, known_only=False):
        """Parses argv (argv[0] is the program): the flags' values; returns what is left."""
        rest = [argv[0]] if argv else []
        args = list(argv[1:])
        i = 0
        while i < len(args):
            a = args[i]
            i += 1
            if a == "--":
                rest.extend(args[i:])
                break
            if not a.startswith("-") or a == "-":
                rest.append(a)
                continue
            body = a.lstrip("-")
            if body in ("help", "helpfull", "h"):
                sys.stdout.write(self._usage())
                sys.exit(0)
            name, eq, value = body.partition("=")
            flag = self._flags.get(name)
            if flag is None and name.startswith("no") and name[2:] in self._flags and self._flags[name[2:]].kind == "bool":
                flag, value, eq = self._flags[name[2:]], "false", "="
            if flag is None:
                if known_only:
                    rest.append(a)
                    continue
                raise UnrecognizedFlagError("unknown command-line flag '%s'; known flags: %s"
                                            % (name, ", ".join("--" + n for n in sorted(self._flags))))
            if not eq:
                if flag.kind == "bool":
                    value = "true"
                elif i < len(args):
                    value = args[i]
                    i += 1
                else:
                    raise IllegalFlagValueError("flag --%s needs a value" % name)
            try:
                flag.value = flag.parse(value)
            except (ValueError, TypeError) as e:
                raise IllegalFlagValueError("flag --%s=%s: %s" % (name, value, e)) from None
            flag.present = True
        self.__dict__["_parsed"] = True
        return rest

    def _usage(self):
        lines = ["flags:"]
        for n in sorted(self._flags):
            f = self._flags[n]
            lines.append("  --%s: %s\n    (default: %r)" % (n, f.help, f.default))
        return "\n".join(lines) + "\n"

    def _ensure_parsed(self):
        if not self._parsed:
            self(sys.argv, known_only=True)

    def __getattr__(self, name):
        flags = self.__dict__["_flags"]
        if name not in flags:
            raise AttributeError("no flag --%s is defined" % name)
        self._ensure_parsed()
        return flags[name].value

    def __setattr__(self, name, value):
        if name not in self._flags:
            raise AttributeError("no flag --%s is defined" % name)
        self._flags[name].value = value

    def __contains__(self, name):
        return name in self._flags

    def __iter__(self):
        return iter(self._flags)

    def is_parsed(self):
        return self._parsed

    def mark_as_parsed(self):
        self.__dict__["_parsed"] = True

    def flag_values_dict(self):
        self._ensure_parsed()
        return {n: f.value for n, f in self._flags.items()}

    def __getitem__(self, name):
        return self._flags[name]


FLAGS = _FlagValues()


def _bool(v):
    if isinstance(v, bool):
        return v
    s = str(v).lower()
    if s in ("true", "t", "1", "yes"):
        return True
    if s in ("false", "f", "0", "no"):
        return False
    raise ValueError("not a boolean (true/false)")


def _define(name, default, help_text, parse, kind, flag_values=FLAGS):
    flag_values._define(_Flag(name, None if default is None else parse(default) if isinstance(default, str) and kind != "string" else default,
                              help_text, parse, kind))


def DEFINE_string(name, default, help, flag_values=FLAGS, **kwargs):  # noqa: N802,A002 (absl's names)
    _define(name, default, help, str, "string", flag_values)


def DEFINE_integer(name, default, help, lower_bound=None, upper_bound=None, flag_values=FLAGS, **kwargs):  # noqa: N802,A002
    def parse(v):
        x = int(v)
        if (lower_bound is not None and x < lower_bound) or (upper_bound is not None and x > upper_bound):
            raise ValueError("%d is outside [%s, %s]" % (x, lower_bound, upper_bound))
        return x
    _define(name, default, help, parse, "int", flag_values)


def DEFINE_float(name, default, help, lower_bound=None, upper_bound=None, flag_values=FLAGS, **kwargs):  # noqa: N802,A002
    _define(name, default, help, float, "float", flag_values)


def DEFINE_boolean(name, default, help, flag_values=FLAGS, **kwargs):  # noqa: N802,A002
    _define(name, default, help, _bool, "bool", flag_values)


DEFINE_bool = DEFINE_boolean


def DEFINE_enum(name, default, enum_values, help, flag_values=FLAGS, **kwargs):  # noqa: N802,A002
    def parse(v):
        if v not in enum_values:
            raise ValueError("must be one of: %s" % ", ".join(enum_values))
        return v
    _define(name, default, help, parse, "enum", flag_values)


def DEFINE_list(name, default, help, flag_values=FLAGS, **kwargs):  # noqa: N802,A002
    def parse(v):
        if isinstance(v, (list, tuple)):
            return list(v)
        return [s for s in str(v).split(",") if s] if v else []
    _define(name, default if not isinstance(default, str) else parse(default), help, parse, "list", flag_values)


def DEFINE_multi_string(name, default, help, flag_values=FLAGS, **kwargs):  # noqa: N802,A002
    DEFINE_list(name, default, help, flag_values)


def mark_flag_as_required(name, flag_values=FLAGS):
    pass


def mark_flags_as_required(names, flag_values=FLAGS):
    pass
