/// Introspection XML generated from `DBusInterface` descriptions.
///
/// The output is deterministic (declaration order, two-space indentation, one element per
/// line, a trailing newline), so a checked-in file such as `dbus/org.orientd.Orientation1.xml`
/// can be compared byte for byte with `document(interfaces:)` of the interfaces the daemon
/// exports. The XML an object serves is the same document with the standard interfaces
/// (`Properties`, `Introspectable`, `Peer`) after its own and its child nodes at the end.
public enum DBusIntrospection {
  /// The document type declaration of the introspection format (introspect.dtd).
  public static let doctype = """
    <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
    """

  /// A complete document: doctype, `<node>`, the interfaces, `<node name=.../>` children.
  public static func document(interfaces: [DBusInterface], children: [String] = []) -> String {
    var out = doctype + "\n<node>\n"
    for interface in interfaces { out += xml(for: interface, indent: "  ") }
    for child in children { out += "  <node name=\"\(escape(child))\"/>\n" }
    out += "</node>\n"
    return out
  }

  /// One `<interface>` element, each line prefixed with `indent`.
  public static func xml(for interface: DBusInterface, indent: String = "") -> String {
    let inner = indent + "  "
    var out = "\(indent)<interface name=\"\(escape(interface.name))\">\n"
    out += annotations(interface.annotations, indent: inner)
    for method in interface.methods {
      let arguments =
        method.inArguments.map { argument($0, direction: "in", indent: inner + "  ") }
        + method.outArguments.map { argument($0, direction: "out", indent: inner + "  ") }
      let body = arguments.joined() + annotations(method.annotations, indent: inner + "  ")
      out += element("method", name: method.name, body: body, indent: inner)
    }
    for signal in interface.signals {
      let body =
        signal.arguments.map { argument($0, direction: nil, indent: inner + "  ") }.joined()
        + annotations(signal.annotations, indent: inner + "  ")
      out += element("signal", name: signal.name, body: body, indent: inner)
    }
    for property in interface.properties {
      var list = property.annotations
      if property.changeSignal != .emits {
        list.insert(
          DBusAnnotation(
            "org.freedesktop.DBus.Property.EmitsChangedSignal", property.changeSignal.rawValue),
          at: 0)
      }
      let body = annotations(list, indent: inner + "  ")
      let head =
        "\(inner)<property name=\"\(escape(property.name))\" "
        + "type=\"\(escape(property.type.signature))\" access=\"\(property.access.rawValue)\""
      out += body.isEmpty ? head + "/>\n" : head + ">\n" + body + "\(inner)</property>\n"
    }
    out += "\(indent)</interface>\n"
    return out
  }

  private static func element(_ tag: String, name: String, body: String, indent: String)
    -> String
  {
    let head = "\(indent)<\(tag) name=\"\(escape(name))\""
    return body.isEmpty ? head + "/>\n" : head + ">\n" + body + "\(indent)</\(tag)>\n"
  }

  private static func argument(_ argument: DBusArgument, direction: String?, indent: String)
    -> String
  {
    var out = "\(indent)<arg"
    if !argument.name.isEmpty { out += " name=\"\(escape(argument.name))\"" }
    out += " type=\"\(escape(argument.type.signature))\""
    if let direction { out += " direction=\"\(direction)\"" }
    return out + "/>\n"
  }

  private static func annotations(_ list: [DBusAnnotation], indent: String) -> String {
    list.map {
      "\(indent)<annotation name=\"\(escape($0.name))\" value=\"\(escape($0.value))\"/>\n"
    }.joined()
  }

  /// Escapes text for an XML attribute value.
  static func escape(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "'": out += "&apos;"
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out
  }
}
