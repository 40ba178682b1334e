// passatk's call channel for Java: a call server for the sample, a proxy for the judge (descriptor 3, one JSON line a call).
final class PassatkRpc {  // compiled once (passatk.execute.judged.java_runtime), on both class paths
    static final class Bad extends RuntimeException {
        Bad() { super("protocol violation", null, false, false); }
    }

    static final int LINE_LIMIT = 16 << 20;
    static java.io.InputStream in;
    static java.io.OutputStream out;

    static void open() {
        if (in != null) return;
        try {
            java.io.FileDescriptor fd = new java.io.FileDescriptor();
            java.lang.reflect.Field f = java.io.FileDescriptor.class.getDeclaredField("fd");
            f.setAccessible(true);
            f.setInt(fd, 3);
            in = new java.io.FileInputStream(fd);
            out = new java.io.FileOutputStream(fd);
        } catch (ReflectiveOperationException | RuntimeException e) {
            broken("cannot open the call channel: " + e);
        }
    }

    static String line() {  // null at the end of the channel (or past the limit)
        java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
        try {
            while (true) {
                int b = in.read();
                if (b < 0) return null;
                if (b == '\n') return new String(buf.toByteArray(), java.nio.charset.StandardCharsets.ISO_8859_1);
                if (buf.size() > LINE_LIMIT) return null;
                buf.write(b);
            }
        } catch (java.io.IOException e) {
            return null;
        }
    }

    static boolean send(String s) {
        try {
            out.write(s.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            out.flush();
            return true;
        } catch (java.io.IOException e) {
            return false;
        }
    }

    // ------------------------------------------------------------------ parsing: Long, Boolean, String, null, List
    static final class Parser {
        final String t;
        int p, depth;
        Parser(String t) { this.t = t; }
        void ws() { while (p < t.length() && " \t\r\n".indexOf(t.charAt(p)) >= 0) p++; }
        void lit(String w) { if (!t.startsWith(w, p)) throw new Bad(); p += w.length(); }
        Object value() {
            if (++depth > 200) throw new Bad();
            ws();
            if (p >= t.length()) throw new Bad();
            char c = t.charAt(p);
            Object v;
            if (c == 'n') { lit("null"); v = null; }
            else if (c == 't') { lit("true"); v = Boolean.TRUE; }
            else if (c == 'f') { lit("false"); v = Boolean.FALSE; }
            else if (c == '"') v = str();
            else if (c == '[') {
                p++;
                java.util.ArrayList<Object> a = new java.util.ArrayList<>();
                ws();
                if (p < t.length() && t.charAt(p) == ']') p++;
                else while (true) {
                    a.add(value());
                    ws();
                    if (p >= t.length()) throw new Bad();
                    char d = t.charAt(p++);
                    if (d == ',') continue;
                    if (d == ']') break;
                    throw new Bad();
                }
                v = a;
            } else if (c == '-' || (c >= '0' && c <= '9')) {
                int s = p;
                if (c == '-') p++;
                int digits = p;
                while (p < t.length() && Character.isDigit(t.charAt(p))) p++;
                if (p == digits || p - digits > 19) throw new Bad();
                try { v = Long.parseLong(t.substring(s, p)); } catch (NumberFormatException e) { throw new Bad(); }
            } else throw new Bad();
            depth--;
            return v;
        }
        String str() {
            StringBuilder b = new StringBuilder();
            p++;
            while (true) {
                if (p >= t.length()) throw new Bad();
                char c = t.charAt(p++);
                if (c == '"') return b.toString();
                if (c != '\\') { b.append(c); continue; }
                if (p >= t.length()) throw new Bad();
                c = t.charAt(p++);
                switch (c) {
                    case '"': b.append('"'); break;
                    case '\\': b.append('\\'); break;
                    case '/': b.append('/'); break;
                    case 'b': b.append('\b'); break;
                    case 'f': b.append('\f'); break;
                    case 'n': b.append('\n'); break;
                    case 'r': b.append('\r'); break;
                    case 't': b.append('\t'); break;
                    case 'u':
                        if (p + 4 > t.length()) throw new Bad();
                        try { b.append((char) Integer.parseInt(t.substring(p, p + 4), 16)); } catch (NumberFormatException e) { throw new Bad(); }
                        p += 4;
                        break;
                    default: throw new Bad();
                }
            }
        }
    }

    static Object parse(String text) {
        Parser ps = new Parser(text);
        Object v = ps.value();
        ps.ws();
        if (ps.p != text.length()) throw new Bad();
        return v;
    }

    static void quote(StringBuilder o, String s) {
        o.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') o.append('\\').append(c);
            else if (c < 0x20 || c > 0x7e) o.append(String.format("\\u%04x", (int) c));
            else o.append(c);
        }
        o.append('"');
    }

    // ------------------------------------------------------------------ the codec, by declared type
    static java.lang.reflect.Type arg(java.lang.reflect.Type t, int i) {
        if (t instanceof java.lang.reflect.ParameterizedType) return ((java.lang.reflect.ParameterizedType) t).getActualTypeArguments()[i];
        return Object.class;
    }

    static Class<?> raw(java.lang.reflect.Type t) {
        if (t instanceof Class) return (Class<?>) t;
        if (t instanceof java.lang.reflect.ParameterizedType) return (Class<?>) ((java.lang.reflect.ParameterizedType) t).getRawType();
        return Object.class;  // a wildcard or a type variable: carried with its runtime type
    }

    static boolean tuple(Class<?> c) { return c.getName().startsWith("org.javatuples."); }

    static void put(StringBuilder o, Object v, java.lang.reflect.Type t) {
        Class<?> c = raw(t);
        if (v == null) { o.append("null"); return; }
        if (c == Object.class || c == Number.class || c == Comparable.class) { dynamic(o, v); return; }
        if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) o.append(((Number) v).longValue());
        else if (v instanceof Double || v instanceof Float) o.append("[\"f\",\"").append(Double.toHexString(((Number) v).doubleValue())).append("\"]");
        else if (v instanceof Boolean) o.append(((Boolean) v) ? "true" : "false");
        else if (v instanceof Character) o.append((int) (Character) v);
        else if (v instanceof String) quote(o, (String) v);
        else if (v instanceof java.util.Optional) {
            java.util.Optional<?> opt = (java.util.Optional<?>) v;
            o.append("[\"o\"");
            if (opt.isPresent()) { o.append(','); put(o, opt.get(), arg(t, 0)); }
            o.append(']');
        } else if (v instanceof java.util.Map) {
            o.append("[\"d\"");
            for (java.util.Map.Entry<?, ?> e : ((java.util.Map<?, ?>) v).entrySet()) {
                o.append(",[\"t\",");
                put(o, e.getKey(), arg(t, 0));
                o.append(',');
                put(o, e.getValue(), arg(t, 1));
                o.append(']');
            }
            o.append(']');
        } else if (v instanceof java.util.List) {
            o.append("[\"l\"");
            for (Object x : (java.util.List<?>) v) { o.append(','); put(o, x, arg(t, 0)); }
            o.append(']');
        } else if (tuple(v.getClass())) {
            o.append("[\"t\"");
            try {
                java.util.List<?> items = (java.util.List<?>) v.getClass().getMethod("toList").invoke(v);
                for (int i = 0; i < items.size(); i++) { o.append(','); put(o, items.get(i), arg(t, i)); }
            } catch (ReflectiveOperationException e) {
                throw new Bad();
            }
            o.append(']');
        } else if (v.getClass().isArray()) {
            o.append("[\"l\"");
            int n = java.lang.reflect.Array.getLength(v);
            java.lang.reflect.Type item = t instanceof java.lang.reflect.GenericArrayType ? ((java.lang.reflect.GenericArrayType) t).getGenericComponentType() : v.getClass().getComponentType();
            for (int i = 0; i < n; i++) { o.append(','); put(o, java.lang.reflect.Array.get(v, i), item); }
            o.append(']');
        } else {
            o.append("[\"a\",\"?\",");
            quote(o, v.getClass().getName());
            o.append(']');
        }
    }

    static final String[][] DYNAMIC = {
        {"java.lang.Long", "long"}, {"java.lang.Integer", "int"}, {"java.lang.Double", "double"}, {"java.lang.Float", "float"},
        {"java.lang.Boolean", "bool"}, {"java.lang.String", "string"}, {"java.lang.Character", "char"},
    };

    static void dynamic(StringBuilder o, Object v) {  // a value declared Object: its runtime type goes with it
        String name = v.getClass().getName();
        for (String[] d : DYNAMIC)
            if (d[0].equals(name)) {
                o.append("[\"a\",\"").append(d[1]).append("\",");
                put(o, v, v.getClass());
                o.append(']');
                return;
            }
        if (v instanceof java.util.List) { o.append("[\"a\",\"list\","); put(o, v, java.util.List.class); o.append(']'); return; }
        if (v instanceof java.util.Map) { o.append("[\"a\",\"map\","); put(o, v, java.util.Map.class); o.append(']'); return; }
        o.append("[\"a\",\"?\",");
        quote(o, name);
        o.append(']');
    }

    static java.util.List<?> tagged(Object j, String tag) {
        if (!(j instanceof java.util.List)) throw new Bad();
        java.util.List<?> a = (java.util.List<?>) j;
        if (a.isEmpty() || !tag.equals(a.get(0))) throw new Bad();
        return a;
    }

    static final class Unknown {  // a value of a type the channel does not carry: equal to nothing
        final String type;
        Unknown(String type) { this.type = type; }
        public String toString() { return "<" + type + ">"; }
    }

    static Object get(Object j, java.lang.reflect.Type t) {
        Class<?> c = raw(t);
        if (j == null) {
            if (c.isPrimitive()) throw new Bad();
            return null;
        }
        if (c == Object.class || c == Number.class || c == Comparable.class) {
            java.util.List<?> a = tagged(j, "a");
            if (a.size() != 3 || !(a.get(1) instanceof String)) throw new Bad();
            switch ((String) a.get(1)) {
                case "long": return get(a.get(2), Long.class);
                case "int": return get(a.get(2), Integer.class);
                case "double": return get(a.get(2), Double.class);
                case "float": return get(a.get(2), Float.class);
                case "bool": return get(a.get(2), Boolean.class);
                case "string": return get(a.get(2), String.class);
                case "char": return get(a.get(2), Character.class);
                case "list": return get(a.get(2), java.util.List.class);
                case "map": return get(a.get(2), java.util.Map.class);
                case "?": return new Unknown(String.valueOf(a.get(2)));
                default: throw new Bad();
            }
        }
        if (c == long.class || c == Long.class) return integer(j, Long.MIN_VALUE, Long.MAX_VALUE);
        if (c == int.class || c == Integer.class) return (int) integer(j, Integer.MIN_VALUE, Integer.MAX_VALUE);
        if (c == short.class || c == Short.class) return (short) integer(j, Short.MIN_VALUE, Short.MAX_VALUE);
        if (c == byte.class || c == Byte.class) return (byte) integer(j, Byte.MIN_VALUE, Byte.MAX_VALUE);
        if (c == char.class || c == Character.class) return (char) integer(j, 0, 0xffff);
        if (c == double.class || c == Double.class) return real(j);
        if (c == float.class || c == Float.class) return (float) real(j);
        if (c == boolean.class || c == Boolean.class) {
            if (!(j instanceof Boolean)) throw new Bad();
            return j;
        }
        if (c == String.class) {
            if (!(j instanceof String)) throw new Bad();
            return j;
        }
        if (c == java.util.Optional.class) {
            java.util.List<?> a = tagged(j, "o");
            if (a.size() == 1) return java.util.Optional.empty();
            if (a.size() != 2) throw new Bad();
            return java.util.Optional.of(get(a.get(1), arg(t, 0)));
        }
        if (java.util.Map.class.isAssignableFrom(c)) {
            java.util.List<?> a = tagged(j, "d");
            java.util.Map<Object, Object> m = c == java.util.TreeMap.class ? new java.util.TreeMap<>() : new java.util.HashMap<>();
            for (int i = 1; i < a.size(); i++) {
                java.util.List<?> kv = tagged(a.get(i), "t");
                if (kv.size() != 3) throw new Bad();
                m.put(get(kv.get(1), arg(t, 0)), get(kv.get(2), arg(t, 1)));
            }
            return m;
        }
        if (java.util.List.class.isAssignableFrom(c) || c == java.util.Collection.class) {
            java.util.List<?> a = tagged(j, "l");
            java.util.List<Object> l = c == java.util.LinkedList.class ? new java.util.LinkedList<>() : new java.util.ArrayList<>();
            for (int i = 1; i < a.size(); i++) l.add(get(a.get(i), arg(t, 0)));
            return l;
        }
        if (tuple(c)) {
            java.util.List<?> a = tagged(j, "t");
            Object[] items = new Object[a.size() - 1];
            for (int i = 0; i < items.length; i++) items[i] = get(a.get(i + 1), arg(t, i));
            try {
                return c.getMethod("fromArray", Object[].class).invoke(null, (Object) items);
            } catch (ReflectiveOperationException e) {
                throw new Bad();
            }
        }
        if (c.isArray()) {
            java.util.List<?> a = tagged(j, "l");
            java.lang.reflect.Type item = t instanceof java.lang.reflect.GenericArrayType ? ((java.lang.reflect.GenericArrayType) t).getGenericComponentType() : c.getComponentType();
            Object arr = java.lang.reflect.Array.newInstance(raw(item), a.size() - 1);
            for (int i = 1; i < a.size(); i++) java.lang.reflect.Array.set(arr, i - 1, get(a.get(i), item));
            return arr;
        }
        throw new Bad();
    }

    static long integer(Object j, long lo, long hi) {
        if (!(j instanceof Long)) throw new Bad();
        long v = (Long) j;
        if (v < lo || v > hi) throw new Bad();
        return v;
    }

    static double real(Object j) {
        java.util.List<?> a = tagged(j, "f");
        if (a.size() != 2 || !(a.get(1) instanceof String)) throw new Bad();
        try {
            return Double.parseDouble((String) a.get(1));
        } catch (NumberFormatException e) {
            throw new Bad();
        }
    }

    static java.lang.reflect.Method entry(Class<?> owner, String name) {
        for (java.lang.reflect.Method m : owner.getDeclaredMethods())
            if (m.getName().equals(name)) {
                m.setAccessible(true);
                return m;
            }
        broken("no method " + name + " in " + owner.getName());
        return null;
    }

    // ------------------------------------------------------------------ the sample's side
    static void serve(Class<?> owner, String name) throws Exception {
        open();
        java.lang.reflect.Method m = entry(owner, name);
        Object self = java.lang.reflect.Modifier.isStatic(m.getModifiers()) ? null : newInstance(owner);
        java.lang.reflect.Type[] params = m.getGenericParameterTypes();
        String text;
        while ((text = line()) != null) {
            Object[] args = new Object[params.length];
            try {
                Object tree = parse(text);
                if (!(tree instanceof java.util.List) || ((java.util.List<?>) tree).size() != params.length) System.exit(2);
                for (int i = 0; i < params.length; i++) args[i] = get(((java.util.List<?>) tree).get(i), params[i]);
            } catch (Bad e) {
                System.exit(2);
            }
            StringBuilder o = new StringBuilder();
            try {
                Object r = m.invoke(self, args);
                o.append("[\"ok\",");
                put(o, r, m.getGenericReturnType());
                o.append("]\n");
            } catch (java.lang.reflect.InvocationTargetException e) {
                o.setLength(0);
                o.append("[\"raised\",");
                quote(o, String.valueOf(e.getCause()));
                o.append("]\n");
            }
            if (!send(o.toString())) return;
        }
    }

    static Object newInstance(Class<?> owner) throws Exception {
        java.lang.reflect.Constructor<?> k = owner.getDeclaredConstructor();
        k.setAccessible(true);
        return k.newInstance();
    }

    // ------------------------------------------------------------------ the judge's side
    static void broken(String why) {
        System.err.println("passatk: " + why);
        System.err.flush();
        Runtime.getRuntime().halt(3);
    }

    static Object call(Class<?> owner, String name, Object... args) {
        open();
        java.lang.reflect.Method m = entry(owner, name);
        java.lang.reflect.Type[] params = m.getGenericParameterTypes();
        StringBuilder o = new StringBuilder("[");
        for (int i = 0; i < args.length; i++) {
            if (i > 0) o.append(',');
            put(o, args[i], params[i]);
        }
        o.append("]\n");
        if (!send(o.toString())) broken("the sample's process ended while the tests were calling it");
        String text = line();
        if (text == null) broken("the sample's process ended while the tests were waiting for it");
        try {
            java.util.List<?> a = (java.util.List<?>) parse(text);
            if (a.size() == 2 && "ok".equals(a.get(0))) return get(a.get(1), m.getGenericReturnType());
            if (a.size() == 2 && "raised".equals(a.get(0)) && a.get(1) instanceof String) {
                System.err.println("passatk: the sample raised: " + a.get(1));
                System.err.flush();
                Runtime.getRuntime().halt(1);
            }
        } catch (Bad | ClassCastException e) {
        }
        broken("protocol violation: an answer the tests cannot read");
        return null;
    }
}
