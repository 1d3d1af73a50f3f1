//! How a vocabulary (a closed set of names a field takes) is declared: one
//! enum whose variants carry their text, so `as_str`, `parse`, the lists
//! (`ALL`, `NAMES`) and, with the `serde` feature, the serde names and the
//! JSON Schema all read the same words.

/// Declares a vocabulary enum: `Variant = "text",` per value, in the order
/// `ALL` and `NAMES` list them (and messages and the JSON Schema with them).
///
/// Two forms. This crate's: serde, the JSON Schema and the OpenAPI schema
/// behind its `serde`, `schema` and `openapi` features. Other crates'
/// (`gco_api`'s roles, auth modes and methods), which always have serde:
/// `vocabulary! { serde; ... }` derives it with each value's text. The
/// forms differ because a macro's `cfg(feature)` is read in the crate that
/// calls it.
#[macro_export]
macro_rules! vocabulary {
    (
        serde;
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            // `tt`, not `literal`: utoipa reads a `literal` fragment's
            // `rename` as no rename at all.
            $($(#[$variant_meta:meta])* $variant:ident = $text:tt,)+
        }
    ) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        $(#[$meta])*
        $vis enum $name {
            $(
                $(#[$variant_meta])*
                #[serde(rename = $text)]
                $variant,
            )+
        }

        $crate::vocabulary!(@words $name { $($variant = $text,)+ });
    };
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$variant_meta:meta])* $variant:ident = $text:literal,)+
        }
    ) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        $(#[$meta])*
        $vis enum $name {
            $(
                $(#[$variant_meta])*
                #[cfg_attr(feature = "serde", serde(rename = $text))]
                $variant,
            )+
        }

        $crate::vocabulary!(@words $name { $($variant = $text,)+ });

        // Its OpenAPI schema (this crate's `openapi` feature): a string,
        // one of the texts.
        #[cfg(feature = "openapi")]
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::schema::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .enum_values(Some(Self::NAMES))
                    .into()
            }
        }

        #[cfg(feature = "openapi")]
        impl utoipa::ToSchema for $name {}
    };
    (@words $name:ident { $($variant:ident = $text:literal,)+ }) => {
        impl $name {
            /// Every value, in the vocabulary's order.
            pub const ALL: [$name; [$($text),+].len()] = [$($name::$variant),+];

            /// Every value's text, in [`Self::ALL`]'s order.
            pub const NAMES: [&'static str; [$($text),+].len()] = [$($text),+];

            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            pub fn parse(text: &str) -> Option<$name> {
                // A scan of `ALL`, not a `match` on the texts: the package
                // is about 400 bytes smaller gzipped.
                Self::ALL.into_iter().find(|v| v.as_str() == text)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
