//! One node being converted: its attributes and inputs, read with errors
//! that name the node and its op.

use crate::error;
use crate::proto::{
    attribute_proto::AttributeType, AttributeProto, GraphProto, NodeProto, TensorProto,
};
use relax_runtime::Error;

/// A node of the graph.
pub struct Node<'a> {
    pub proto: &'a NodeProto,
}

impl<'a> Node<'a> {
    /// `node "name" (Op)`, or `node #i (Op)` for an unnamed node.
    pub fn describe(&self) -> String {
        let name = self.proto.name();
        if name.is_empty() {
            let out = self.proto.output.first().map_or("", String::as_str);
            format!("the {} node making `{out}`", self.op())
        } else {
            format!("node \"{name}\" ({})", self.op())
        }
    }

    /// The op type (`Conv`).
    pub fn op(&self) -> &str {
        self.proto.op_type()
    }

    /// An error about this node.
    pub fn error(&self, message: impl std::fmt::Display) -> Error {
        error(format!("{}: {message}", self.describe()))
    }

    fn attr(&self, name: &str) -> Option<&'a AttributeProto> {
        self.proto.attribute.iter().find(|a| a.name() == name)
    }

    /// Whether the attribute is given.
    pub fn has(&self, name: &str) -> bool {
        self.attr(name).is_some()
    }

    fn typed(&self, name: &str, ty: AttributeType) -> Result<Option<&'a AttributeProto>, Error> {
        match self.attr(name) {
            None => Ok(None),
            Some(a) if a.r#type() == ty || a.r#type() == AttributeType::Undefined => Ok(Some(a)),
            Some(a) => Err(self.error(format!(
                "attribute `{name}` is {}, expected {}",
                a.r#type().as_str_name(),
                ty.as_str_name()
            ))),
        }
    }

    /// An integer attribute.
    pub fn int(&self, name: &str) -> Result<Option<i64>, Error> {
        Ok(self.typed(name, AttributeType::Int)?.map(|a| a.i()))
    }

    /// An integer attribute with a default.
    pub fn int_or(&self, name: &str, default: i64) -> Result<i64, Error> {
        Ok(self.int(name)?.unwrap_or(default))
    }

    /// A float attribute with a default.
    pub fn float_or(&self, name: &str, default: f32) -> Result<f32, Error> {
        Ok(self
            .typed(name, AttributeType::Float)?
            .map_or(default, |a| a.f()))
    }

    /// A list-of-integers attribute.
    pub fn ints(&self, name: &str) -> Result<Option<Vec<i64>>, Error> {
        Ok(self
            .typed(name, AttributeType::Ints)?
            .map(|a| a.ints.clone()))
    }

    /// A list-of-floats attribute.
    pub fn floats(&self, name: &str) -> Result<Option<Vec<f32>>, Error> {
        Ok(self
            .typed(name, AttributeType::Floats)?
            .map(|a| a.floats.clone()))
    }

    /// A string attribute.
    pub fn string(&self, name: &str) -> Result<Option<String>, Error> {
        match self.typed(name, AttributeType::String)? {
            None => Ok(None),
            Some(a) => String::from_utf8(a.s().to_vec())
                .map(Some)
                .map_err(|_| self.error(format!("attribute `{name}` is not UTF-8"))),
        }
    }

    /// A tensor attribute.
    pub fn tensor(&self, name: &str) -> Result<Option<&'a TensorProto>, Error> {
        Ok(self
            .typed(name, AttributeType::Tensor)?
            .and_then(|a| a.t.as_ref()))
    }

    /// A graph attribute (a subgraph: `If`'s branches, a `Loop` body).
    pub fn graph(&self, name: &str) -> Result<Option<&'a GraphProto>, Error> {
        Ok(self
            .typed(name, AttributeType::Graph)?
            .and_then(|a| a.g.as_ref()))
    }

    /// A list-of-strings attribute (each UTF-8).
    pub fn strings(&self, name: &str) -> Result<Option<Vec<String>>, Error> {
        let Some(a) = self.typed(name, AttributeType::Strings)? else {
            return Ok(None);
        };
        a.strings
            .iter()
            .map(|s| {
                String::from_utf8(s.clone())
                    .map_err(|_| self.error(format!("attribute `{name}` is not UTF-8")))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// The name of input `i`, if given (an empty name is an omitted
    /// optional input).
    pub fn input_name(&self, i: usize) -> Option<&'a str> {
        self.proto
            .input
            .get(i)
            .map(String::as_str)
            .filter(|n| !n.is_empty())
    }

    /// How many inputs are listed (omitted ones included).
    pub fn num_inputs(&self) -> usize {
        self.proto.input.len()
    }

    /// How many outputs the node has.
    pub fn num_outputs(&self) -> usize {
        self.proto.output.len()
    }

    /// Fails unless every attribute is one of `known`: an attribute a
    /// converter does not read would be silently ignored otherwise.
    pub fn only_attrs(&self, known: &[&str]) -> Result<(), Error> {
        for a in &self.proto.attribute {
            if !known.contains(&a.name()) {
                return Err(self.error(format!(
                    "attribute `{}` is not supported (supported: {})",
                    a.name(),
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                )));
            }
        }
        Ok(())
    }
}
